/**
 * Consumption history windows, as the public document gives them: `from` and `to` are rounded
 * down to the granularity; hourly data reaches back 168 hours, daily 60 days, monthly a year,
 * and nothing before 2024-03-01; a window ends at the latest with the step that holds now. Timeframes are cut at billing-period (calendar month) edges.
 */
export type Granularity = "hourly" | "daily" | "monthly";

export const HISTORY_START = Date.UTC(2024, 2, 1);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const REACH: Record<Granularity, number> = { hourly: 168 * HOUR, daily: 60 * DAY, monthly: 366 * DAY };

export function floorTo(ms: number, granularity: Granularity): number {
  const d = new Date(ms);
  if (granularity === "hourly") return Math.floor(ms / HOUR) * HOUR;
  if (granularity === "daily") return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function next(ms: number, granularity: Granularity): number {
  if (granularity === "hourly") return ms + HOUR;
  if (granularity === "daily") return ms + DAY;
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The rounded window, or why it is refused (`outside`: 406 in the public document; `invalid`: 400). */
export function windowOf(
  from: number,
  to: number,
  granularity: Granularity,
  now: number,
): { from: number; to: number } | { outside: string } | { invalid: string } {
  const start = floorTo(from, granularity);
  // Nothing is consumed in the future: the window ends with the step that holds `now`.
  const end = Math.min(floorTo(to, granularity), next(floorTo(now, granularity), granularity));
  if (end <= start) return { invalid: `to must be at least one ${granularity} step after from` };
  if (start < HISTORY_START) return { outside: "consumption history starts at 2024-03-01T00:00:00Z" };
  if (start < floorTo(now - REACH[granularity], granularity))
    return {
      outside: `${granularity} consumption is available for the last ${
        { hourly: "168 hours", daily: "60 days", monthly: "year" }[granularity]
      }; choose a later from or a coarser granularity`,
    };
  return { from: start, to: end };
}

/** Timeframes of the window, each within one billing period (month), grouped by period start. */
export function timeframesOf(window: { from: number; to: number }, granularity: Granularity) {
  const periods = new Map<number, { start: number; end: number }[]>();
  for (let at = window.from; at < window.to; at = next(at, granularity)) {
    const period = floorTo(at, "monthly");
    const list = periods.get(period) ?? [];
    list.push({ start: at, end: Math.min(next(at, granularity), window.to) });
    periods.set(period, list);
  }
  return periods;
}

/** Milliseconds two intervals share. */
export function overlap(a: { start: number; end: number }, b: { start: number; end: number }): number {
  return Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));
}

/** Project-level metrics of the v2 routes; branches take the first six. */
export const V2_METRICS = [
  "compute_unit_seconds",
  "root_branch_bytes_month",
  "child_branch_bytes_month",
  "instant_restore_bytes_month",
  "public_network_transfer_bytes",
  "private_network_transfer_bytes",
  "extra_branches_month",
  "snapshot_storage_bytes_month",
] as const;
export const BRANCH_METRICS = V2_METRICS.slice(0, 6);
export type Metric = (typeof V2_METRICS)[number];

/** Splits repeated and comma-separated list parameters (`a&a`, `a,b`). */
export function listParam(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(",")).filter((v) => v !== "");
}
