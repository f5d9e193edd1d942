/**
 * A project's consumption quotas (`settings.quota`), as the public API describes them: once the
 * project's active time or compute time in the current consumption period (the calendar month,
 * UTC) reaches its quota, its computes are suspended and none may start — through the API or a
 * client's connection — until the quota is raised or the period ends. Zero or absent means
 * unlimited. Pure.
 *
 * Enforced: `active_time_seconds` and `compute_time_seconds`, the two figures the emulator
 * measures. `written_data_bytes` and `data_transfer_bytes` are kept and shown but the emulator
 * reports both metrics as 0, and `logical_size_bytes` needs Neon's storage (neon.max_cluster_size).
 */
import { EmulatorError } from "../../errors.js";

/** Every quota the API takes (ProjectQuota). */
export const QUOTA_NAMES = [
  "active_time_seconds",
  "compute_time_seconds",
  "written_data_bytes",
  "data_transfer_bytes",
  "logical_size_bytes",
] as const;

/** Rows of projects with a quota set: the partial index projects_quota_idx holds exactly these. */
export const QUOTA_SET_SQL = "json_extract(settings, '$.quota') IS NOT NULL";

/** The quotas the emulator enforces, in seconds; 0 is unlimited. */
export interface Quota {
  activeSeconds: number;
  computeSeconds: number;
}

/** What a project used in the period so far (milliseconds, not rounded) and how fast it uses more now. */
export interface QuotaUsage {
  activeMs: number;
  /** Compute-unit milliseconds. */
  computeMs: number;
  /** Computes active now (each adds a millisecond of active time per millisecond). */
  open: number;
  /** Their sizes summed (compute-unit milliseconds per millisecond). */
  openCu: number;
}

const positive = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;

/** The enforced quotas of a project's `settings.quota` (its JSON text, as stored), or null when none limits. */
export function quotaOf(json: string | null | undefined): Quota | null {
  if (!json) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  const q = (parsed ?? {}) as Record<string, unknown>;
  const quota = {
    activeSeconds: positive(q.active_time_seconds),
    computeSeconds: positive(q.compute_time_seconds),
  };
  return quota.activeSeconds || quota.computeSeconds ? quota : null;
}

/** The quota the usage has reached (the figure the project shows, whole seconds, at or past it), if any. */
export function reachedQuota(
  quota: Quota,
  usage: QuotaUsage,
): "active_time_seconds" | "compute_time_seconds" | null {
  if (quota.activeSeconds && usage.activeMs >= quota.activeSeconds * 1000) return "active_time_seconds";
  if (quota.computeSeconds && usage.computeMs >= quota.computeSeconds * 1000) return "compute_time_seconds";
  return null;
}

/** When the running computes reach a quota, if they keep running (clock milliseconds); null if never. */
export function quotaReachedAt(quota: Quota, usage: QuotaUsage, now: number): number | null {
  const at = (limitMs: number, usedMs: number, rate: number) =>
    limitMs > 0 && rate > 0
      ? now + Math.max(0, Math.ceil((limitMs - usedMs) / rate))
      : Number.POSITIVE_INFINITY;
  const t = Math.min(
    at(quota.activeSeconds * 1000, usage.activeMs, usage.open),
    at(quota.computeSeconds * 1000, usage.computeMs, usage.openCu),
  );
  return Number.isFinite(t) ? t : null;
}

/** The answer to a start the quota forbids (422; the code is the reason Neon's control plane gives). */
export function quotaExceeded(
  projectId: string,
  which: "active_time_seconds" | "compute_time_seconds",
  quota: Quota,
  periodEnd: number,
): EmulatorError {
  const limit = which === "active_time_seconds" ? quota.activeSeconds : quota.computeSeconds;
  return new EmulatorError(
    which === "active_time_seconds" ? "ACTIVE_TIME_QUOTA_EXCEEDED" : "COMPUTE_TIME_QUOTA_EXCEEDED",
    `project ${projectId} has used its ${which} quota of ${limit} for the consumption period ending ${new Date(periodEnd).toISOString()}; its computes cannot start until settings.quota.${which} is raised (0 is unlimited) or the period ends`,
  );
}
