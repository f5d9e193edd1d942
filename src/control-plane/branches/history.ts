/**
 * Points in a branch's history that requests name: a create's `parent_lsn` / `parent_timestamp`, a
 * restore's `source_lsn` / `source_timestamp`, a schema read's or a snapshot's `lsn` / `timestamp`. The data is made by replaying the source's history
 * (compute/postgres/history.ts); here the point is checked against what that history holds and
 * turned into what the replay stops at: an LSN, or a wall time (Postgres stamps commits with wall
 * time; on a manual clock, the account's time maps to the wall time its clock moved past it).
 */
import { eq } from "drizzle-orm";
import type { Ctx } from "../../context.js";
import { wallTimeOf } from "../../emulator/state-store.js";
import { badRequest, unprocessable } from "../../errors.js";
import { iso, wallNow } from "../../platform/clock.js";
import type { Tx } from "../../platform/db.js";
import { type BranchRow, type ProjectRow, requireBranch, requireProject } from "../access.js";
import { lsnBytes } from "../consumption/meter.js";
import { projects } from "../projects/table.js";
import { findDefaultBranch } from "./store.js";

export interface PointRequest {
  lsn?: string | undefined;
  timestamp?: string | undefined;
}

/** A point checked: what the branch's data is made from (`history_point`), and what the branch shows of it. */
export interface HistoryPoint {
  /** `lsn:X/X` or `time:<wall ms>` (to the microsecond: `time:<ms>.<µs>`); undefined for the source's head. */
  point?: string;
  parentLsn?: string;
  parentTimestamp?: number;
}

/**
 * Checks a requested point of `source`'s history: an LSN as Postgres writes one, or a time between
 * the start of the source's history (its creation, its last restore) and now, within the project's
 * history_retention_seconds. A time that is now is the source's head.
 */
export function historyPoint(
  ctx: Ctx,
  tx: Tx,
  project: Pick<ProjectRow, "accountId" | "historyRetentionSeconds">,
  source: Pick<BranchRow, "id" | "createdAt" | "historySince">,
  at: PointRequest,
  names: { lsn: string; timestamp: string },
): HistoryPoint {
  if (at.lsn !== undefined && at.timestamp !== undefined)
    throw badRequest(`${names.lsn} and ${names.timestamp} cannot be specified at the same time`);
  if (at.lsn !== undefined) {
    if (lsnBytes(at.lsn) === null)
      throw badRequest(`${names.lsn} must be an LSN such as 0/1A2B3C4 (got "${at.lsn}")`);
    // As Postgres prints one: hex without leading zeros (00000000/1918900 is 0/1918900).
    const lsn = at.lsn
      .trim()
      .split("/")
      .map((part) => Number.parseInt(part, 16).toString(16).toUpperCase())
      .join("/");
    return { point: `lsn:${lsn}`, parentLsn: lsn };
  }
  if (at.timestamp === undefined) return {};
  const accountId = project.accountId;
  const ms = Date.parse(at.timestamp);
  if (Number.isNaN(ms))
    throw badRequest(
      `${names.timestamp} must be a timestamp such as 2024-02-26T12:00:00Z (got "${at.timestamp}")`,
    );
  const now = ctx.clock.now(accountId);
  if (ms > now) throw badRequest(`${names.timestamp} ${at.timestamp} is in the future (now is ${iso(now)})`);
  const since = source.historySince ?? source.createdAt;
  if (ms < since)
    throw badRequest(
      `${names.timestamp} ${at.timestamp} is before branch ${source.id}'s history begins (${iso(since)}, when it was created or last restored)`,
    );
  const window = project.historyRetentionSeconds * 1000;
  if (ms < now - window)
    throw badRequest(
      `${names.timestamp} ${at.timestamp} is older than the project keeps history for (history_retention_seconds: ${project.historyRetentionSeconds}; the earliest point is ${iso(now - window)})`,
    );
  if (ms === now) return { parentTimestamp: ms };
  if (ctx.clock.mode === "real") {
    // To the microsecond: the branch shows the time its data is at.
    const micros = subMillisecond(at.timestamp);
    return {
      point: micros ? `time:${ms}.${String(micros).padStart(3, "0")}` : `time:${ms}`,
      parentTimestamp: ms + micros / 1000,
    };
  }
  // The manual clock stood at or before `ms` until the advance past it.
  const wall = wallTimeOf(tx, accountId, ms);
  if (wall === undefined)
    throw unprocessable(
      `${names.timestamp} ${at.timestamp}: the emulator has no record of when the manual clock moved past it (it was advanced before the emulator kept one)`,
    );
  return { point: `time:${wall}`, parentTimestamp: ms };
}

/**
 * The microseconds past the millisecond a timestamp names (its fraction's 4th to 6th digits), which
 * Date.parse drops. Postgres stamps commits to the microsecond: a point cut to its millisecond
 * would leave out a commit made before it.
 */
function subMillisecond(timestamp: string): number {
  return Number((/\d:\d\d\.\d{3}(\d{1,3})/.exec(timestamp)?.[1] ?? "").padEnd(3, "0"));
}

/**
 * A point a create, restore, schema read or snapshot names lies within what its source's history
 * holds now, checked before the request is taken (a replay that cannot reach it would fail the
 * request's operation after the fact): an LSN from where the history begins to where its WAL ends,
 * a time not before the history began. 422 for a branch whose data was made before the emulator
 * kept history (its history starts at its compute's next start), 400 with the range otherwise.
 * With no compute driver, or a branch whose data is not made yet, there is nothing to check
 * against; a malformed point, or both kinds at once, are the request's own 400.
 */
export async function requireInHistory(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  sourceId: string | undefined,
  at: PointRequest,
  names: { lsn: string; timestamp: string },
): Promise<void> {
  if ((at.lsn === undefined) === (at.timestamp === undefined) || !ctx.branchData) return;
  const project = requireProject(ctx.db, accountId, projectId);
  const source = sourceId
    ? requireBranch(ctx.db, accountId, projectId, sourceId)
    : findDefaultBranch(ctx.db, projectId);
  if (!source) return;
  const range = await ctx.branchData.historyRange(projectId, source.id).catch(() => undefined);
  if (range === undefined) return;
  if (range === null)
    throw unprocessable(
      `branch ${source.id} has no history to replay yet (its data was made before the emulator kept history); its history starts at its compute's next start`,
    );
  if (at.lsn !== undefined) {
    const lsn = lsnBytes(at.lsn);
    if (lsn === null) return;
    if (lsn < (lsnBytes(range.start) ?? 0) || lsn > (lsnBytes(range.end) ?? Number.POSITIVE_INFINITY))
      throw badRequest(
        `${names.lsn} ${at.lsn} is outside branch ${source.id}'s history, which holds ${range.start} to ${range.end}`,
      );
    // As a time of that moment is (historyPoint): the WAL may still be there, the window is not.
    if (range.keptFrom !== undefined && lsn < (lsnBytes(range.keptFrom) ?? 0))
      throw badRequest(
        `${names.lsn} ${at.lsn} is older than the project keeps history for (history_retention_seconds: ${project.historyRetentionSeconds}; the earliest LSN within it is ${range.keptFrom})`,
      );
    return;
  }
  const ms = Date.parse(at.timestamp as string);
  if (Number.isNaN(ms) || ms >= ctx.clock.now(accountId) || range.since === undefined) return;
  const wall = ctx.clock.mode === "real" ? ms : wallTimeOf(ctx.db, accountId, ms);
  if (wall !== undefined && wall < range.since)
    throw badRequest(
      `${names.timestamp} ${at.timestamp} is before branch ${source.id}'s history begins${ctx.clock.mode === "real" ? ` at ${iso(range.since)}` : ""} (the emulator keeps it from when the branch's current data was made)`,
    );
}

/**
 * The wall time before which a project's branch history may go (compute/postgres' pruning): its
 * history_retention_seconds back from now, on its account's clock. On a manual clock that time maps
 * to the wall time the clock moved past it, as a requested point does (with no retention, now);
 * undefined while it has not, or for a project that no longer exists.
 */
export function historyKeptSince(ctx: Ctx, projectId: string): number | undefined {
  const project = ctx.db
    .select({ accountId: projects.accountId, retention: projects.historyRetentionSeconds })
    .from(projects)
    .where(eq(projects.id, projectId))
    .get();
  if (!project) return undefined;
  const now = ctx.clock.now(project.accountId);
  const from = now - project.retention * 1000;
  if (ctx.clock.mode === "real") return from;
  // None kept: all written so far is before the window (the clock has not moved past now).
  return from >= now ? wallNow() : wallTimeOf(ctx.db, project.accountId, from);
}
