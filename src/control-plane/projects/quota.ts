/**
 * A project's consumption quotas (`settings.quota`), as the public API describes them: once the
 * project's active time, compute time, written data or data transfer in the current consumption
 * period (the calendar month, UTC) reaches its quota, its computes are suspended and none may
 * start — through the API or a client's connection — until the quota is raised or the period
 * ends. Zero or absent means unlimited. Pure.
 *
 * `logical_size_bytes` is kept and shown, not enforced: it needs Neon's storage (neon.max_cluster_size).
 */
import { EmulatorError, type ErrorCode } from "../../errors.js";

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

/** The quotas the emulator enforces (seconds, bytes); 0 is unlimited. */
export interface Quota {
  activeSeconds: number;
  computeSeconds: number;
  writtenBytes: number;
  transferBytes: number;
}

/** The quotas a project's usage can use up. */
export type QuotaName =
  | "active_time_seconds"
  | "compute_time_seconds"
  | "written_data_bytes"
  | "data_transfer_bytes";

/** What a project used in the period so far (milliseconds, not rounded) and how fast it uses more now. */
export interface QuotaUsage {
  activeMs: number;
  /** Compute-unit milliseconds. */
  computeMs: number;
  /** Computes active now (each adds a millisecond of active time per millisecond). */
  open: number;
  /** Their sizes summed (compute-unit milliseconds per millisecond). */
  openCu: number;
  /** WAL the project's primaries wrote (bytes, as metered). */
  writtenBytes: number;
  /** Bytes the front door sent to the project's clients. */
  transferBytes: number;
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
    writtenBytes: positive(q.written_data_bytes),
    transferBytes: positive(q.data_transfer_bytes),
  };
  return quota.activeSeconds || quota.computeSeconds || quota.writtenBytes || quota.transferBytes
    ? quota
    : null;
}

/** The quota the usage has reached (the figure the project shows at or past it), if any. */
export function reachedQuota(quota: Quota, usage: QuotaUsage): QuotaName | null {
  if (quota.activeSeconds && usage.activeMs >= quota.activeSeconds * 1000) return "active_time_seconds";
  if (quota.computeSeconds && usage.computeMs >= quota.computeSeconds * 1000) return "compute_time_seconds";
  if (quota.writtenBytes && usage.writtenBytes >= quota.writtenBytes) return "written_data_bytes";
  if (quota.transferBytes && usage.transferBytes >= quota.transferBytes) return "data_transfer_bytes";
  return null;
}

/**
 * When the running computes reach a time quota, if they keep running (clock milliseconds); null if
 * never. (Bytes are counted as they move: the data quotas are judged when they are recorded.)
 */
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

/** Each quota's limit in a Quota, and the reason Neon's control plane gives when it is used up. */
const QUOTAS: Record<QuotaName, { limit: keyof Quota; code: ErrorCode }> = {
  active_time_seconds: { limit: "activeSeconds", code: "ACTIVE_TIME_QUOTA_EXCEEDED" },
  compute_time_seconds: { limit: "computeSeconds", code: "COMPUTE_TIME_QUOTA_EXCEEDED" },
  written_data_bytes: { limit: "writtenBytes", code: "WRITTEN_DATA_QUOTA_EXCEEDED" },
  data_transfer_bytes: { limit: "transferBytes", code: "DATA_TRANSFER_QUOTA_EXCEEDED" },
};

/** The answer to a start the quota forbids (422; the code is the reason Neon's control plane gives). */
export function quotaExceeded(
  projectId: string,
  which: QuotaName,
  quota: Quota,
  periodEnd: number,
): EmulatorError {
  const limit = quota[QUOTAS[which].limit];
  return new EmulatorError(
    QUOTAS[which].code,
    `project ${projectId} has used its ${which} quota of ${limit} for the consumption period ending ${new Date(periodEnd).toISOString()}; its computes cannot start until settings.quota.${which} is raised (0 is unlimited) or the period ends`,
  );
}
