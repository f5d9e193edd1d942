import { and, eq, ne } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { operations } from "../db/schema/index.js";
import { UNFINISHED_OPERATION_SQL } from "../db/schema/operations.js";
import type { OperationAction } from "../domain/operations.js";
import { iso, isoMicros, parseIsoMicros } from "../lib/clock.js";
import { badRequest, notFound } from "../lib/errors.js";
import type { JsonText } from "../lib/json-text.js";
import { statement } from "../lib/prepared.js";
import { projectNotFound, requireProject } from "./projects.js";

export type OperationRow = typeof operations.$inferSelect;

export interface NewOperation {
  accountId: string;
  projectId: string;
  branchId: string | null;
  endpointId?: string | null;
  action: OperationAction;
}

/** An operation row's columns under its field names, for raw statements. */
export const OPERATION_COLUMNS = `id, account_id AS accountId, project_id AS projectId, branch_id AS branchId,
  endpoint_id AS endpointId, action, status, failures_count AS failuresCount, error,
  created_us AS createdUs, updated_at AS updatedAt, due_at AS dueAt, started_at AS startedAt,
  total_duration_ms AS totalDurationMs`;

/**
 * True when an earlier operation on the same endpoint is unfinished: operations on one endpoint
 * apply in order. Nothing else waits, so an endpoint create always answers a running
 * start_compute (spec: endpoint states table), even on a branch still being created.
 */
export function hasBlocker(ctx: Ctx, op: Pick<OperationRow, "endpointId" | "createdUs">): boolean {
  if (!op.endpointId) return false;
  const row = statement(
    ctx.db,
    `SELECT 1 FROM operations
      WHERE endpoint_id = @endpointId AND created_us < @createdUs AND ${UNFINISHED_OPERATION_SQL}
      LIMIT 1`,
  ).get({ endpointId: op.endpointId, createdUs: op.createdUs });
  return row !== undefined;
}

/** Next microsecond timestamp: the clock's time, or one past the newest operation, whichever is later. */
function nextCreatedUs(ctx: Ctx): number {
  const latest =
    statement<{ v: number | null }>(ctx.db, "SELECT MAX(created_us) AS v FROM operations").get()?.v ?? 0;
  return Math.max(ctx.clock.now() * 1000, latest + 1);
}

/**
 * Records an operation inside the caller's transaction. It starts `running` unless an earlier
 * operation blocks it, in which case it waits as `scheduling` for the worker to promote it.
 */
export function startOperation(ctx: Ctx, _tx: Tx, input: NewOperation): OperationRow {
  const now = ctx.clock.now();
  const createdUs = nextCreatedUs(ctx);
  const endpointId = input.endpointId ?? null;
  const blocked = hasBlocker(ctx, { endpointId, createdUs });
  const row: OperationRow = {
    id: ctx.ids.uuid(),
    accountId: input.accountId,
    projectId: input.projectId,
    branchId: input.branchId,
    endpointId,
    action: input.action,
    status: blocked ? "scheduling" : "running",
    failuresCount: 0,
    error: null,
    createdUs,
    updatedAt: now,
    dueAt: blocked ? null : now + ctx.config.operationMs[input.action],
    startedAt: blocked ? null : now,
    totalDurationMs: 0,
  };
  // Prepared on the database handle, which is the transaction's connection: it runs inside it.
  statement(
    ctx.db,
    `INSERT INTO operations (id, account_id, project_id, branch_id, endpoint_id, action, status,
       failures_count, error, created_us, updated_at, due_at, started_at, total_duration_ms)
     VALUES (@id, @accountId, @projectId, @branchId, @endpointId, @action, @status,
       @failuresCount, @error, @createdUs, @updatedAt, @dueAt, @startedAt, @totalDurationMs)`,
  ).run(row);
  return row;
}

/**
 * Records operations that nothing can block (they have no endpoint, so they start `running`) in
 * one statement, in input order with consecutive `created_us`: the periodic checks start one per
 * branch at the same moment, and one statement costs far less than one per row.
 */
export function startUnblockedOperations(
  ctx: Ctx,
  _tx: Tx,
  action: OperationAction,
  inputs: readonly Omit<NewOperation, "endpointId" | "action">[],
): number {
  if (inputs.length === 0) return 0;
  const now = ctx.clock.now();
  const rows = inputs.map((i) => [ctx.ids.uuid(), i.accountId, i.projectId, i.branchId]);
  return statement(
    ctx.db,
    `INSERT INTO operations (id, account_id, project_id, branch_id, endpoint_id, action, status,
       failures_count, error, created_us, updated_at, due_at, started_at, total_duration_ms)
     SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, NULL, @action, 'running',
       0, NULL, @firstUs + key, @now, @dueAt, @now, 0
       FROM json_each(@rows)`,
  ).run({
    action,
    firstUs: nextCreatedUs(ctx),
    now,
    dueAt: now + ctx.config.operationMs[action],
    rows: JSON.stringify(rows),
  }).changes;
}

export function toOperationJson(row: OperationRow) {
  return {
    id: row.id,
    project_id: row.projectId,
    ...(row.branchId ? { branch_id: row.branchId } : {}),
    ...(row.endpointId ? { endpoint_id: row.endpointId } : {}),
    action: row.action,
    status: row.status,
    ...(row.error ? { error: row.error } : {}),
    failures_count: row.failuresCount,
    created_at: isoMicros(row.createdUs),
    updated_at: iso(row.updatedAt),
    total_duration_ms: row.totalDurationMs,
  };
}
export type OperationJson = ReturnType<typeof toOperationJson>;

/**
 * An operation row rendered as JSON by SQLite, exactly as toOperationJson renders it (same keys,
 * order, omissions and timestamp formats; test/routes/operations.test.ts compares the two): a
 * page is then one string from one statement, with no per-row JavaScript objects.
 */
const OPERATION_JSON_SQL = `printf(
  '{"id":%s,"project_id":%s%s%s,"action":%s,"status":%s%s,"failures_count":%d,"created_at":"%s.%06dZ","updated_at":"%s%sZ","total_duration_ms":%d}',
  json_quote(id), json_quote(project_id),
  iif(ifnull(branch_id, '') = '', '', ',"branch_id":' || json_quote(branch_id)),
  iif(ifnull(endpoint_id, '') = '', '', ',"endpoint_id":' || json_quote(endpoint_id)),
  json_quote(action), json_quote(status),
  iif(ifnull(error, '') = '', '', ',"error":' || json_quote(error)),
  failures_count,
  replace(datetime(created_us / 1000000, 'unixepoch'), ' ', 'T'), created_us % 1000000,
  replace(datetime(updated_at / 1000, 'unixepoch'), ' ', 'T'),
  iif(updated_at % 1000 = 0, '', printf('.%03d', updated_at % 1000)),
  total_duration_ms)`;

export interface OperationPage {
  operations: OperationJson[];
  pagination?: { cursor: string } | undefined;
}

/**
 * A page of a project's operations, newest first, below the cursor (a `created_at` with
 * microseconds). One statement checks the project and renders the page; the response is sent as
 * the text it returns.
 */
export function listOperations(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  query: { limit?: number | undefined; cursor?: string | undefined },
): JsonText<OperationPage> {
  const limit = query.limit ?? 10;
  let before = Number.MAX_SAFE_INTEGER;
  if (query.cursor !== undefined) {
    const parsed = parseIsoMicros(query.cursor);
    if (parsed === null)
      throw badRequest(
        `cursor must be a pagination.cursor value from a previous page (got "${query.cursor}")`,
      );
    before = parsed;
  }
  const page = statement<{ found: number | null; items: string | null; lastUs: number | null }>(
    ctx.db,
    `SELECT (SELECT 1 FROM projects WHERE id = @projectId AND account_id = @accountId) AS found,
            group_concat(json, ',' ORDER BY created_us DESC) AS items, min(created_us) AS lastUs
       FROM (SELECT ${OPERATION_JSON_SQL} AS json, created_us FROM operations
              WHERE project_id = @projectId AND created_us < @before
              ORDER BY created_us DESC LIMIT @limit)`,
  ).get({ projectId, accountId, before, limit });
  if (!page?.found) throw projectNotFound(projectId);
  // Without a row, the cursor sent stays the cursor: the end of the list.
  const cursor = page.lastUs !== null ? isoMicros(page.lastUs) : query.cursor;
  return `{"operations":[${page.items ?? ""}]${
    cursor === undefined ? "" : `,"pagination":{"cursor":${JSON.stringify(cursor)}}`
  }}` as JsonText<OperationPage>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function getOperation(ctx: Ctx, accountId: string, projectId: string, operationId: string) {
  requireProject(ctx.db, accountId, projectId);
  if (!UUID.test(operationId)) throw badRequest(`operation_id must be a UUID (got "${operationId}")`);
  const row = ctx.db
    .select()
    .from(operations)
    .where(and(eq(operations.id, operationId.toLowerCase()), eq(operations.projectId, projectId)))
    .get();
  if (!row) throw notFound(`operation ${operationId} not found in project ${projectId}`);
  return { operation: toOperationJson(row) };
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

/** Removes a deleted project's operations except `keep` (its delete_tenant operation, which still runs). */
export function deleteProjectOperations(tx: Tx, projectId: string, keep: string): void {
  tx.delete(operations)
    .where(and(eq(operations.projectId, projectId), ne(operations.id, keep)))
    .run();
}
