import { and, eq, ne } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { insertRow, insertRows } from "../../platform/sql.js";
import { statement } from "../../platform/statements.js";
import { type OperationAction, type OperationStatus, UNFINISHED_OPERATION_SQL } from "./rules.js";
import { operations } from "./table.js";

export type OperationRow = typeof operations.$inferSelect;

/** An operation row's columns under its field names, for raw statements. */
export const OPERATION_COLUMNS = `id, account_id AS accountId, project_id AS projectId, branch_id AS branchId,
  endpoint_id AS endpointId, action, status, failures_count AS failuresCount, error,
  created_us AS createdUs, updated_at AS updatedAt, due_at AS dueAt, started_at AS startedAt,
  total_duration_ms AS totalDurationMs, claim`;

export function insertOperation(tx: Tx, row: OperationRow): void {
  insertRow(tx, operations, row);
}

export function insertOperations(tx: Tx, rows: readonly OperationRow[]): number {
  return insertRows(tx, operations, rows);
}

/** The newest `created_us` of a project's operations, or 0 when it has none. */
export function latestCreatedUs(tx: Tx, projectId: string): number {
  return (
    statement<{ v: number | null }>(
      tx,
      "SELECT MAX(created_us) AS v FROM operations WHERE project_id = @projectId",
    ).get({
      projectId,
    })?.v ?? 0
  );
}

/** The status of the endpoint's newest operation doing `action`, or undefined when it has none. */
export function newestStatus(
  tx: Tx,
  projectId: string,
  endpointId: string,
  action: OperationAction,
): OperationStatus | undefined {
  return statement<{ status: OperationStatus }>(
    tx,
    `SELECT status FROM operations
      WHERE project_id = @projectId AND endpoint_id = @endpointId AND action = @action
      ORDER BY created_us DESC LIMIT 1`,
  ).get({ projectId, endpointId, action })?.status;
}

/** True when an operation on the endpoint created before `createdUs` is unfinished. */
export function hasUnfinishedBefore(tx: Tx, endpointId: string, createdUs: number): boolean {
  const row = statement(
    tx,
    `SELECT 1 FROM operations
      WHERE endpoint_id = @endpointId AND created_us < @createdUs AND ${UNFINISHED_OPERATION_SQL}
      LIMIT 1`,
  ).get({ endpointId, createdUs });
  return row !== undefined;
}

/** The actions of one endpoint's unfinished operations, oldest first. */
export function unfinishedActions(tx: Tx, endpointId: string): string[] {
  return statement<{ action: string }>(
    tx,
    `SELECT action FROM operations
      WHERE endpoint_id = @endpointId AND ${UNFINISHED_OPERATION_SQL} ORDER BY created_us`,
  )
    .all({ endpointId })
    .map((r) => r.action);
}

export function findProjectOperation(
  tx: Tx,
  projectId: string,
  operationId: string,
): OperationRow | undefined {
  return tx
    .select()
    .from(operations)
    .where(and(eq(operations.id, operationId), eq(operations.projectId, projectId)))
    .get();
}

/**
 * A page of a project's operations, newest first, below `before` (microseconds), rendered by
 * SQLite (OPERATION_JSON_SQL), with whether the project exists for the account: one statement.
 */
export function readOperationsPage(
  tx: Tx,
  accountId: string,
  projectId: string,
  before: number,
  limit: number,
): { found: number | null; items: string | null; lastUs: number | null } | undefined {
  return statement<{ found: number | null; items: string | null; lastUs: number | null }>(
    tx,
    `SELECT (SELECT 1 FROM projects WHERE id = @projectId AND account_id = @accountId) AS found,
            group_concat(json, ',' ORDER BY created_us DESC) AS items, min(created_us) AS lastUs
       FROM (SELECT ${OPERATION_JSON_SQL} AS json, created_us FROM operations
              WHERE project_id = @projectId AND created_us < @before
              ORDER BY created_us DESC LIMIT @limit)`,
  ).get({ projectId, accountId, before, limit });
}

/**
 * An operation row rendered as JSON by SQLite, exactly as toOperationJson (render.ts) renders it (same keys,
 * order, omissions and timestamp formats; test/routes/operations.test.ts compares the two). What
 * it buys: a page of operations is one string from one statement, with no per-row JavaScript
 * objects (the operations list of a long-lived sandbox holds hundreds of thousands of rows).
 */
export const OPERATION_JSON_SQL = `printf(
  '{"id":%s,"project_id":%s%s%s,"action":%s,"status":%s%s,"failures_count":%d,"created_at":"%s.%06dZ","updated_at":"%s.%06dZ","total_duration_ms":%d}',
  json_quote(id), json_quote(project_id),
  iif(ifnull(branch_id, '') = '', '', ',"branch_id":' || json_quote(branch_id)),
  iif(ifnull(endpoint_id, '') = '', '', ',"endpoint_id":' || json_quote(endpoint_id)),
  json_quote(action), json_quote(status),
  iif(ifnull(error, '') = '', '', ',"error":' || json_quote(error)),
  failures_count,
  replace(datetime(created_us / 1000000, 'unixepoch'), ' ', 'T'), created_us % 1000000,
  replace(datetime(max(updated_at * 1000, created_us) / 1000000, 'unixepoch'), ' ', 'T'),
  max(updated_at * 1000, created_us) % 1000000,
  total_duration_ms)`;

/** Removes a deleted project's operations except `keep` (its delete_tenant operation, which still runs). */
export function deleteProjectOperations(tx: Tx, projectId: string, keep: string): void {
  tx.delete(operations)
    .where(and(eq(operations.projectId, projectId), ne(operations.id, keep)))
    .run();
}

export function deleteAccountOperations(tx: Tx, accountId: string): void {
  tx.delete(operations).where(eq(operations.accountId, accountId)).run();
}

/** Marks every operation of a project finished at `at` (a seed's history), or removes them all. */
export function settleProjectOperations(tx: Tx, projectId: string, keepHistory: boolean, at: number): void {
  if (!keepHistory) {
    tx.delete(operations).where(eq(operations.projectId, projectId)).run();
    return;
  }
  tx.update(operations)
    .set({ status: "finished", dueAt: null, totalDurationMs: 1200, updatedAt: at })
    .where(eq(operations.projectId, projectId))
    .run();
}

/**
 * A recovered project's pending delete_tenant operation is dropped; false when it is being
 * performed right now (claimed), so the recovery must wait.
 */
export function dropPendingDeletion(tx: Tx, projectId: string): boolean {
  const claimed = statement(
    tx,
    `SELECT 1 FROM operations WHERE project_id = @projectId AND action = 'delete_tenant'
       AND claim IS NOT NULL AND ${UNFINISHED_OPERATION_SQL}`,
  ).get({ projectId });
  if (claimed) return false;
  statement(tx, "DELETE FROM operations WHERE project_id = @projectId AND action = 'delete_tenant'").run({
    projectId,
  });
  return true;
}
