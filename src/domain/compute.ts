/** Compute sizes and auto-suspend rules from the spec's compute table and limits. */

export const COMPUTE_SIZES = [0.25, 0.5, 1, 2, 3, 4, 5, 6, 7] as const;
export const FREE_PLAN_CU = 0.25;

export const SUSPEND_TIMEOUT_DEFAULT = 300;
export const SUSPEND_TIMEOUT_MAX = 604_800; // 7 days
export const SUSPEND_DISABLED = -1;

export function isComputeSize(value: number): boolean {
  return (COMPUTE_SIZES as readonly number[]).includes(value);
}

export const COMPUTE_SIZES_TEXT = COMPUTE_SIZES.join(", ");

/**
 * Returns a problem description for a min/max pair, or null when the pair is a fixed size
 * (min = max) or an autoscaling range (min < max) of allowed sizes.
 */
export function computeLimitsProblem(min: number, max: number): string | null {
  if (!isComputeSize(min))
    return `autoscaling_limit_min_cu must be one of ${COMPUTE_SIZES_TEXT} (got ${min})`;
  if (!isComputeSize(max))
    return `autoscaling_limit_max_cu must be one of ${COMPUTE_SIZES_TEXT} (got ${max})`;
  if (min > max) return `autoscaling_limit_min_cu (${min}) must not exceed autoscaling_limit_max_cu (${max})`;
  return null;
}

/** 0 means "use the default", -1 turns auto-suspend off. */
export function effectiveSuspendTimeout(value: number): number {
  return value === 0 ? SUSPEND_TIMEOUT_DEFAULT : value;
}
