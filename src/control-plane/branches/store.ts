import { and, asc, count, desc, eq, gt, inArray, lt, ne, or } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { contains, uniqueOrConflict } from "../../platform/sql.js";
import { statement } from "../../platform/statements.js";
import type { BranchRow } from "../access.js";
import { UNFINISHED_OPERATION_SQL } from "../operations/rules.js";
import { nameTaken, type SortBy } from "./rules.js";
import { branches } from "./table.js";

export function findDefaultBranch(tx: Tx, projectId: string): BranchRow | undefined {
  return tx
    .select()
    .from(branches)
    .where(and(eq(branches.projectId, projectId), eq(branches.isDefault, true)))
    .get();
}

/** Inserts a branch; a name already used in the project answers 409. */
export function insertBranch(tx: Tx, row: BranchRow): void {
  uniqueOrConflict(
    () => tx.insert(branches).values(row).run(),
    () => nameTaken(row.name, row.projectId),
  );
}

export function updateBranchRow(tx: Tx, row: BranchRow): void {
  uniqueOrConflict(
    () => tx.update(branches).set(row).where(eq(branches.id, row.id)).run(),
    () => nameTaken(row.name, row.projectId),
  );
}

/** Deletes a branch; its endpoints, roles and databases go with it (foreign keys cascade). */
export function deleteBranchRow(tx: Tx, branchId: string): void {
  tx.delete(branches).where(eq(branches.id, branchId)).run();
}

/** A protected branch of the project, if any. */
export function findProtectedBranch(tx: Tx, projectId: string): string | undefined {
  return tx
    .select({ id: branches.id })
    .from(branches)
    .where(and(eq(branches.projectId, projectId), eq(branches.protected, true)))
    .limit(1)
    .get()?.id;
}

export function findChild(tx: Tx, branchId: string): string | undefined {
  return tx.select({ id: branches.id }).from(branches).where(eq(branches.parentId, branchId)).limit(1).get()
    ?.id;
}

/**
 * A branch of the project whose data is being made from `branchId`'s (a schema-only branch, a
 * restore's preserved state): its create_branch unfinished. (One that failed waits for no one.)
 */
export function findDataDependent(tx: Tx, projectId: string, branchId: string): string | undefined {
  return statement<{ id: string }>(
    tx,
    `SELECT b.id FROM branches b WHERE b.project_id = @projectId AND b.data_source = @branchId
       AND EXISTS (SELECT 1 FROM operations WHERE branch_id = b.id AND action = 'create_branch'
                     AND ${UNFINISHED_OPERATION_SQL})
     LIMIT 1`,
  ).get({ projectId, branchId })?.id;
}

/** Makes `branchId` the project's only default branch. */
export function setDefault(tx: Tx, projectId: string, branchId: string, now: number): void {
  tx.update(branches)
    .set({ isDefault: false, updatedAt: now })
    .where(and(eq(branches.projectId, projectId), eq(branches.isDefault, true)))
    .run();
  tx.update(branches).set({ isDefault: true, updatedAt: now }).where(eq(branches.id, branchId)).run();
}

/** Whether a branch's data is being made or replaced (its create_branch/create_timeline unfinished). */
export function branchDataPending(tx: Tx, branchId: string): boolean {
  return (
    statement<{ s: string }>(tx, "SELECT current_state AS s FROM branches WHERE id = @id").get({
      id: branchId,
    })?.s === "init"
  );
}

/** A branch's data is ready (its create_timeline/create_branch operation finished). */
export function markReady(tx: Tx, branchId: string, now: number): void {
  statement(
    tx,
    `UPDATE branches SET current_state = 'ready', pending_state = NULL, state_changed_at = @now,
       data_source = NULL, restore_source = NULL, history_point = NULL WHERE id = @id`,
  ).run({ now, id: branchId });
}

const SORT_COLUMNS = { name: branches.name, created_at: branches.createdAt, updated_at: branches.updatedAt };

/** Branches whose name or id contains `search` (every branch without one). */
function matching(search: string | undefined) {
  return search ? or(contains(branches.name, search), contains(branches.id, search)) : undefined;
}

/** How many of a project's branches match `search` (all of them without one). */
export function countBranchRows(tx: Tx, projectId: string, search: string | undefined): number {
  const row = tx
    .select({ n: count() })
    .from(branches)
    .where(and(eq(branches.projectId, projectId), matching(search)))
    .get();
  return row?.n ?? 0;
}

/** A page of a project's branches in the given order after `after` ([sort value, id]); limit + 1 rows. */
export function listBranchRows(
  tx: Tx,
  projectId: string,
  opts: {
    search?: string | undefined;
    sortBy: SortBy;
    order: "asc" | "desc";
    after?: [string | number, string] | undefined;
    limit: number;
  },
): BranchRow[] {
  const { search, after, order } = opts;
  const column = SORT_COLUMNS[opts.sortBy];
  const cmp = order === "asc" ? gt : lt;
  return tx
    .select()
    .from(branches)
    .where(
      and(
        eq(branches.projectId, projectId),
        matching(search),
        after ? or(cmp(column, after[0]), and(eq(column, after[0]), cmp(branches.id, after[1]))) : undefined,
      ),
    )
    .orderBy(
      order === "asc" ? asc(column) : desc(column),
      order === "asc" ? asc(branches.id) : desc(branches.id),
    )
    .limit(opts.limit + 1)
    .all();
}

/** What the compute measured of a branch's data (NEON_EMULATOR_COMPUTE=postgres). */
export function recordBranchData(
  tx: Tx,
  branchId: string,
  data: {
    logicalSize?: number | undefined;
    parentLsn?: string | undefined;
    parentTimestamp?: number | undefined;
  },
): void {
  statement(
    tx,
    `UPDATE branches SET logical_size = coalesce(@logicalSize, logical_size),
       parent_lsn = coalesce(@parentLsn, parent_lsn),
       parent_timestamp = coalesce(@parentTimestamp, parent_timestamp) WHERE id = @id`,
  ).run({
    id: branchId,
    logicalSize: data.logicalSize ?? null,
    parentLsn: data.parentLsn ?? null,
    parentTimestamp: data.parentTimestamp ?? null,
  });
}

/** Every branch of a project, oldest first. */
export function listProjectBranches(tx: Tx, projectId: string): BranchRow[] {
  return tx
    .select()
    .from(branches)
    .where(eq(branches.projectId, projectId))
    .orderBy(asc(branches.createdAt), asc(branches.id))
    .all();
}

/** The children of one branch become another's (a restore hands them to the preserved state). */
export function moveChildren(tx: Tx, fromParentId: string, toParentId: string, now: number): void {
  tx.update(branches)
    .set({ parentId: toParentId, updatedAt: now })
    .where(and(eq(branches.parentId, fromParentId), ne(branches.id, toParentId)))
    .run();
}

const expiryScope = (scope: string | null) => (scope === null ? "" : " AND b.account_id = @account");

/**
 * Branches whose expires_at passed by `now` (of the account `scope` names; null: every account's)
 * and that a DELETE would remove: not the default, not protected, no children, not being made (an
 * unfinished create_branch or create_timeline), no branch's data being made from theirs, in a
 * project not locked. Earliest first, at most 100 at a time (those that must wait are not among
 * them, so they hold no others back). Read at every pass of the worker: a prepared statement, and
 * rows only for those due.
 */
export function expiredBranches(tx: Tx, now: number, scope: string | null): BranchRow[] {
  const due = statement<{ id: string }>(
    tx,
    `SELECT b.id FROM branches b
      WHERE b.expires_at IS NOT NULL AND b.expires_at <= @now${expiryScope(scope)}
        AND NOT b.is_default AND NOT b.protected
        AND NOT EXISTS (SELECT 1 FROM branches c WHERE c.parent_id = b.id)
        AND NOT EXISTS (SELECT 1 FROM operations WHERE operations.branch_id = b.id AND ${UNFINISHED_OPERATION_SQL}
                          AND operations.action IN ('create_branch', 'create_timeline'))
        AND NOT EXISTS (SELECT 1 FROM branches d JOIN operations ON operations.branch_id = d.id
                         WHERE d.project_id = b.project_id AND d.data_source = b.id
                           AND operations.action = 'create_branch' AND ${UNFINISHED_OPERATION_SQL})
        AND NOT EXISTS (SELECT 1 FROM projects WHERE projects.id = b.project_id AND projects.locked)
      ORDER BY b.expires_at LIMIT 100`,
  ).all({ now, account: scope });
  if (due.length === 0) return [];
  return tx
    .select()
    .from(branches)
    .where(
      inArray(
        branches.id,
        due.map((d) => d.id),
      ),
    )
    .orderBy(asc(branches.expiresAt))
    .all();
}

/** The earliest expires_at after `now` (of the account `scope` names; null: every account's). */
export function nextExpiryAt(tx: Tx, now: number, scope: string | null): number | null {
  return (
    statement<{ at: number | null }>(
      tx,
      `SELECT min(b.expires_at) AS at FROM branches b
        WHERE b.expires_at IS NOT NULL AND b.expires_at > @now${expiryScope(scope)}`,
    ).get({ now, account: scope })?.at ?? null
  );
}
