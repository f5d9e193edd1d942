/**
 * Points in a branch's history that requests name: a create's `parent_lsn` / `parent_timestamp`, a
 * restore's `source_lsn` / `source_timestamp`. The data is made by replaying the source's history
 * (compute/postgres/history.ts); here the point is checked against what that history holds and
 * turned into what the replay stops at: an LSN, or a wall time (Postgres stamps commits with wall
 * time; on a manual clock, the account's time maps to the wall time its clock moved past it).
 */
import type { Ctx } from "../../context.js";
import { wallTimeOf } from "../../emulator/state-store.js";
import { badRequest, unprocessable } from "../../errors.js";
import { iso } from "../../platform/clock.js";
import type { Tx } from "../../platform/db.js";
import { type BranchRow, type ProjectRow, requireBranch, requireProject } from "../access.js";
import { lsnBytes } from "../consumption/meter.js";
import { findDefaultBranch } from "./store.js";

const LSN = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i;

export interface PointRequest {
  lsn?: string | undefined;
  timestamp?: string | undefined;
}

/** A point checked: what the branch's data is made from (`history_point`), and what the branch shows of it. */
export interface HistoryPoint {
  /** `lsn:X/X` or `time:<wall ms>`; undefined for the source's head. */
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
    if (!LSN.test(at.lsn))
      throw badRequest(`${names.lsn} must be an LSN such as 0/1A2B3C4 (got "${at.lsn}")`);
    const lsn = at.lsn.toUpperCase();
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
  if (ctx.clock.mode === "real") return { point: `time:${ms}`, parentTimestamp: ms };
  // The manual clock stood at or before `ms` until the advance past it.
  const wall = wallTimeOf(tx, accountId, ms);
  if (wall === undefined)
    throw unprocessable(
      `${names.timestamp} ${at.timestamp}: the emulator has no record of when the manual clock moved past it (it was advanced before the emulator kept one)`,
    );
  return { point: `time:${wall}`, parentTimestamp: ms };
}

/**
 * An LSN a create or restore names lies within its source's history as it stands now (from where
 * it begins to where its WAL ends), checked before the request is taken: past the end, or before
 * the branch's history began, the replay could not reach it. A 400 that says the range. With no
 * compute driver, or no history kept for the branch yet, there is nothing to check against.
 */
export async function requireLsnInHistory(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  sourceId: string | undefined,
  lsn: string | undefined,
  name: string,
): Promise<void> {
  const at = lsn === undefined ? null : lsnBytes(lsn);
  if (at === null || !ctx.branchData) return;
  requireProject(ctx.db, accountId, projectId);
  const source = sourceId
    ? requireBranch(ctx.db, accountId, projectId, sourceId)
    : findDefaultBranch(ctx.db, projectId);
  if (!source) return;
  const range = await ctx.branchData.historyRange(projectId, source.id).catch(() => undefined);
  if (!range) return;
  const start = lsnBytes(range.start) ?? 0;
  const end = lsnBytes(range.end) ?? Number.POSITIVE_INFINITY;
  if (at < start || at > end)
    throw badRequest(
      `${name} ${lsn} is outside branch ${source.id}'s history, which holds ${range.start} to ${range.end}`,
    );
}
