/**
 * Metered traffic (usage_meter): what the front door sent to clients and the WAL branches wrote,
 * per branch and hour of the account's clock. The front door and the compute driver measure; the
 * worker's metering job records here (worker/metering.ts); projects, branches, consumption history
 * and quotas read the sums.
 */
import type { Tx } from "../../platform/db.js";
import { statement } from "../../platform/statements.js";

/** Meters count by the hour of the account's clock. */
export const HOUR_MS = 3_600_000;

/** Bytes sent to clients of one branch's computes since the last record. */
export interface TransferEntry {
  projectId: string;
  branchId: string;
  bytes: number;
}

/** What a project or branch moved: bytes sent to clients, bytes of WAL written. */
export interface Traffic {
  transferBytes: number;
  writtenBytes: number;
}
export const NO_TRAFFIC: Traffic = { transferBytes: 0, writtenBytes: 0 };

/** An LSN (`16/B374D848`) as a byte position; null when it is not one. */
export function lsnBytes(lsn: string): number | null {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  return m ? Number.parseInt(m[1] as string, 16) * 2 ** 32 + Number.parseInt(m[2] as string, 16) : null;
}

function add(
  tx: Tx,
  row: { accountId: string; projectId: string; branchId: string },
  at: number,
  column: "transfer_bytes" | "written_bytes",
  bytes: number,
): void {
  statement(
    tx,
    `INSERT INTO usage_meter (account_id, project_id, branch_id, hour, ${column})
     VALUES (@accountId, @projectId, @branchId, @hour, @bytes)
     ON CONFLICT (branch_id, hour) DO UPDATE SET ${column} = ${column} + excluded.${column}`,
  ).run({ ...row, hour: Math.floor(at / HOUR_MS) * HOUR_MS, bytes });
}

/** A project whose figures a record changed, with its account. */
export interface Counted {
  projectId: string;
  accountId: string;
}

/**
 * Adds bytes sent to clients, each in the current hour of its project's account (`now` gives an
 * account's clock). Bytes of a project that no longer exists are dropped. Returns the projects counted.
 */
export function recordTransfer(
  tx: Tx,
  entries: readonly TransferEntry[],
  now: (accountId: string) => number,
): Counted[] {
  const counted = new Map<string, Counted>();
  for (const e of entries) {
    const project = statement<{ accountId: string }>(
      tx,
      "SELECT account_id AS accountId FROM projects WHERE id = @id",
    ).get({ id: e.projectId });
    if (!project || e.bytes <= 0) continue;
    add(tx, { ...e, accountId: project.accountId }, now(project.accountId), "transfer_bytes", e.bytes);
    counted.set(e.projectId, { projectId: e.projectId, accountId: project.accountId });
  }
  return [...counted.values()];
}

/**
 * How a measure of a branch's WAL position counts:
 * - `wrote`: its primary wrote up to `lsn`; what lies past the last measure is counted (a measure
 *   behind it adds nothing; the first measure of a branch only starts the count);
 * - `skip`: the emulator's own work moved the WAL to `lsn` (a copy's segment switches): counting
 *   goes on from there, nothing added;
 * - `reset`: its data was made or replaced: the count starts again where its primary next starts;
 * - `begin`: its primary started at `lsn`: where the count starts, if it was reset.
 */
export type WalMeasure = "wrote" | "skip" | "reset" | "begin";

/**
 * Records a measure of the branch's WAL (WalMeasure). Returns the branch's project when bytes were
 * added to the current hour of its account's clock (`now`).
 */
export function recordWal(
  tx: Tx,
  branchId: string,
  measure: WalMeasure,
  lsn: string | null,
  now: (accountId: string) => number,
): Counted | null {
  const row = statement<{ accountId: string; projectId: string; meteredLsn: string | null }>(
    tx,
    "SELECT account_id AS accountId, project_id AS projectId, metered_lsn AS meteredLsn FROM branches WHERE id = @id",
  ).get({ id: branchId });
  if (!row) return null;
  const set = (to: string | null) =>
    statement(tx, "UPDATE branches SET metered_lsn = @to WHERE id = @id").run({ id: branchId, to });
  const at = lsn === null ? null : lsnBytes(lsn);
  if (measure === "reset") set(null);
  else if (at === null) return null;
  else if (measure === "skip" || (measure === "begin" && row.meteredLsn === null)) set(lsn);
  else if (measure === "wrote") {
    const from = row.meteredLsn === null ? null : lsnBytes(row.meteredLsn);
    if (from !== null && at <= from) return null;
    set(lsn);
    if (from === null) return null;
    add(tx, { ...row, branchId }, now(row.accountId), "written_bytes", at - from);
    return { projectId: row.projectId, accountId: row.accountId };
  }
  return null;
}

/** A project's or a branch's traffic in the hours from `since` up to `now`. */
export function trafficOf(
  tx: Tx,
  of: { projectId: string } | { branchId: string },
  now: number,
  since = 0,
): Traffic {
  const [column, id] = "projectId" in of ? ["project_id", of.projectId] : ["branch_id", of.branchId];
  return (
    statement<Traffic>(
      tx,
      `SELECT coalesce(sum(transfer_bytes), 0) AS transferBytes, coalesce(sum(written_bytes), 0) AS writtenBytes
         FROM usage_meter WHERE ${column} = @id AND hour >= @since AND hour <= @now`,
    ).get({ id, now, since }) ?? NO_TRAFFIC
  );
}

/** Each branch's traffic up to `now`, for a project's branch list. */
export function trafficByBranch(tx: Tx, projectId: string, now: number): Map<string, Traffic> {
  const rows = statement<Traffic & { id: string }>(
    tx,
    `SELECT branch_id AS id, sum(transfer_bytes) AS transferBytes, sum(written_bytes) AS writtenBytes
       FROM usage_meter WHERE project_id = @projectId AND hour <= @now GROUP BY branch_id`,
  ).all({ projectId, now });
  return new Map(rows.map((r) => [r.id, { transferBytes: r.transferBytes, writtenBytes: r.writtenBytes }]));
}

export interface MeterRow extends Traffic {
  projectId: string;
  branchId: string;
  hour: number;
}

/** The hours of the given projects' traffic in [from, to). */
export function trafficIn(tx: Tx, projectIds: readonly string[], from: number, to: number): MeterRow[] {
  return statement<MeterRow>(
    tx,
    `SELECT project_id AS projectId, branch_id AS branchId, hour, transfer_bytes AS transferBytes,
            written_bytes AS writtenBytes
       FROM usage_meter
      WHERE project_id IN (SELECT value FROM json_each(@ids)) AND hour >= @from AND hour < @to`,
  ).all({ ids: JSON.stringify(projectIds), from, to });
}
