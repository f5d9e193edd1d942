import { and, desc, eq, lt, ne, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { operations } from "../db/schema/index.js";
import { UNFINISHED_OPERATION_SQL } from "../db/schema/operations.js";
import type { OperationAction } from "../domain/operations.js";
import { iso, isoMicros, parseIsoMicros } from "../lib/clock.js";
import { badRequest, notFound } from "../lib/errors.js";
import { prepared, statement } from "../lib/prepared.js";
import { requireProject } from "./projects.js";

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

export function listOperations(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  query: { limit?: number | undefined; cursor?: string | undefined },
) {
  requireProject(ctx.db, accountId, projectId);
  const limit = query.limit ?? 10;
  let before: number | null = null;
  if (query.cursor !== undefined) {
    before = parseIsoMicros(query.cursor);
    if (before === null)
      throw badRequest(
        `cursor must be a pagination.cursor value from a previous page (got "${query.cursor}")`,
      );
  }
  // A page is newest first below the cursor; without one, below the largest possible time.
  const rows = prepared(ctx.db, "operations.page", () =>
    ctx.db
      .select()
      .from(operations)
      .where(
        and(
          eq(operations.projectId, sql.placeholder("projectId")),
          lt(operations.createdUs, sql.placeholder("before")),
        ),
      )
      .orderBy(desc(operations.createdUs))
      .limit(sql.placeholder("limit"))
      .prepare(),
  ).all({ projectId, before: before ?? Number.MAX_SAFE_INTEGER, limit });
  const last = rows[rows.length - 1];
  return {
    operations: rows.map(toOperationJson),
    pagination: last
      ? { cursor: isoMicros(last.createdUs) }
      : query.cursor
        ? { cursor: query.cursor }
        : undefined,
  };
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
