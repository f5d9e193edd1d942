/**
 * Storage kept beside the branches' data, for consumption history: the WAL each root branch's
 * history holds (Neon's instant restore storage; child branches' history is not billed on Neon)
 * as measured by the compute driver, hour by hour in usage_meter.history_bytes; and each
 * snapshot's bytes over the time it is kept (snapshot_storage).
 */
import type { Tx } from "../../platform/db.js";
import { statement } from "../../platform/statements.js";
import { HOUR_MS } from "./meter.js";

/** A measure that holds from its hour until the branch's next one. */
export interface HistorySample {
  projectId: string;
  branchId: string;
  hour: number;
  bytes: number;
}

/** A snapshot's bytes, kept from `since` until `until` (null: still kept, with no expiry). */
export interface SnapshotSpan {
  projectId: string;
  bytes: number;
  since: number;
  until: number | null;
}

/** Sets a branch's history bytes from the hour of `at`, unless that is what it already holds. */
function setHistory(
  tx: Tx,
  row: { accountId: string; projectId: string; branchId: string },
  at: number,
  bytes: number,
): void {
  const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
  const last = statement<{ bytes: number }>(
    tx,
    `SELECT history_bytes AS bytes FROM usage_meter INDEXED BY usage_meter_branch_history_idx
      WHERE project_id = @projectId AND branch_id = @branchId AND history_bytes IS NOT NULL
        AND hour <= @hour
      ORDER BY hour DESC LIMIT 1`,
  ).get({ projectId: row.projectId, branchId: row.branchId, hour });
  if ((last?.bytes ?? 0) === bytes) return;
  statement(
    tx,
    `INSERT INTO usage_meter (account_id, project_id, branch_id, hour, history_bytes)
     VALUES (@accountId, @projectId, @branchId, @hour, @bytes)
     ON CONFLICT (branch_id, hour) DO UPDATE SET history_bytes = excluded.history_bytes`,
  ).run({ ...row, hour, bytes });
}

/**
 * Records what a project's histories hold now (`bytes`: the WAL of each branch's past, from the
 * driver) at the current hour of the account's clock: each root branch its own (none: 0), every
 * other branch 0 (a root restored from its own history becomes a child of its kept state, which
 * takes its past).
 */
export function recordHistory(
  tx: Tx,
  projectId: string,
  bytes: ReadonlyMap<string, number>,
  now: (accountId: string) => number,
): void {
  const branches = statement<{ id: string; accountId: string; root: number }>(
    tx,
    `SELECT id, account_id AS accountId, parent_id IS NULL AS root FROM branches
      WHERE project_id = @projectId`,
  ).all({ projectId });
  for (const b of branches)
    setHistory(
      tx,
      { accountId: b.accountId, projectId, branchId: b.id },
      now(b.accountId),
      b.root ? (bytes.get(b.id) ?? 0) : 0,
    );
}

/** A branch goes at `at`: its history counts to the end of that hour (it was kept in it), then no more. */
export function endHistory(
  tx: Tx,
  branch: { accountId: string; projectId: string; id: string },
  at: number,
): void {
  setHistory(tx, { ...branch, branchId: branch.id }, at + HOUR_MS, 0);
}

/**
 * The given projects' history measures in [from, to), and each branch's last one before `from`
 * (which holds at `from`), by branch and hour. Both read only the history measures' indexes (a
 * project's other rows are one per branch and hour): the branches with measures are found by
 * skipping from one to the next in the index, and each one's last measure before `from` at once.
 */
export function historyIn(tx: Tx, projectIds: readonly string[], from: number, to: number): HistorySample[] {
  const samples: HistorySample[] = [];
  for (const projectId of new Set(projectIds)) {
    samples.push(
      ...statement<HistorySample>(
        tx,
        `WITH RECURSIVE measured(id) AS (
           SELECT min(branch_id) FROM usage_meter INDEXED BY usage_meter_branch_history_idx
            WHERE project_id = @projectId AND history_bytes IS NOT NULL
           UNION ALL
           SELECT (SELECT min(branch_id) FROM usage_meter INDEXED BY usage_meter_branch_history_idx
                    WHERE project_id = @projectId AND history_bytes IS NOT NULL AND branch_id > measured.id)
             FROM measured WHERE measured.id IS NOT NULL)
         SELECT project_id AS projectId, branch_id AS branchId, hour, history_bytes AS bytes
           FROM measured JOIN usage_meter ON usage_meter.rowid = (
             SELECT rowid FROM usage_meter INDEXED BY usage_meter_branch_history_idx
              WHERE project_id = @projectId AND branch_id = measured.id AND history_bytes IS NOT NULL
                AND hour < @from
              ORDER BY hour DESC LIMIT 1)
         UNION ALL
         SELECT project_id, branch_id, hour, history_bytes
           FROM usage_meter INDEXED BY usage_meter_history_idx
          WHERE project_id = @projectId AND history_bytes IS NOT NULL AND hour >= @from AND hour < @to`,
      ).all({ projectId, from, to }),
    );
  }
  return samples.sort((a, b) =>
    a.branchId === b.branchId ? a.hour - b.hour : a.branchId < b.branchId ? -1 : 1,
  );
}

/** A snapshot's data was copied (`bytes`): kept from its creation until it expires or goes. */
export function snapshotKept(
  tx: Tx,
  s: { id: string; accountId: string; projectId: string; bytes: number; since: number; until: number | null },
): void {
  statement(
    tx,
    `INSERT INTO snapshot_storage (snapshot_id, account_id, project_id, bytes, since, until)
     VALUES (@id, @accountId, @projectId, @bytes, @since, @until)
     ON CONFLICT (snapshot_id) DO UPDATE SET bytes = excluded.bytes, until = excluded.until`,
  ).run(s);
}

/** A kept snapshot's expiry changed (null: kept until deleted). */
export function snapshotExpires(tx: Tx, snapshotId: string, until: number | null): void {
  statement(tx, "UPDATE snapshot_storage SET until = @until WHERE snapshot_id = @snapshotId").run({
    snapshotId,
    until,
  });
}

/** A snapshot was deleted at `at`: it counts until then (or until it expired, if before). */
export function snapshotDeleted(tx: Tx, snapshotId: string, at: number): void {
  statement(
    tx,
    "UPDATE snapshot_storage SET until = min(coalesce(until, @at), @at) WHERE snapshot_id = @snapshotId",
  ).run({ snapshotId, at });
}

/** The given projects' snapshots kept at some time in [from, to). */
export function snapshotsIn(tx: Tx, projectIds: readonly string[], from: number, to: number): SnapshotSpan[] {
  return statement<SnapshotSpan>(
    tx,
    `SELECT project_id AS projectId, bytes, since, until FROM snapshot_storage
      WHERE project_id IN (SELECT value FROM json_each(@ids)) AND since < @to
        AND (until IS NULL OR until > @from)`,
  ).all({ ids: JSON.stringify(projectIds), from, to });
}
