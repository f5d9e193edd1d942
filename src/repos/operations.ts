import { and, desc, eq, lt, max, ne, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { operations } from "../db/schema/index.js";
import type { OperationAction } from "../domain/operations.js";
import { iso, isoMicros, parseIsoMicros } from "../lib/clock.js";
import { badRequest, notFound } from "../lib/errors.js";
import { prepared } from "../lib/prepared.js";
import { requireProject } from "./projects.js";

export type OperationRow = typeof operations.$inferSelect;

export interface NewOperation {
  accountId: string;
  projectId: string;
  branchId: string | null;
  endpointId?: string | null;
  action: OperationAction;
}

/**
 * `status IN ('scheduling', 'running')` written out as the partial index operations_pending_idx
 * states it: SQLite uses a partial index only for a query that repeats its condition (a bound
 * parameter never does), and without it every worker step scans all operations ever made.
 */
export const unfinishedOperation = sql`${operations.status} IN ('scheduling', 'running')`;

/**
 * True when an earlier operation on the same endpoint is unfinished: operations on one endpoint
 * apply in order. Nothing else waits, so an endpoint create always answers a running
 * start_compute (spec: endpoint states table), even on a branch still being created.
 */
export function hasBlocker(ctx: Ctx, op: Pick<OperationRow, "endpointId" | "createdUs">): boolean {
  if (!op.endpointId) return false;
  const row = prepared(ctx.db, "operations.blocker", () =>
    ctx.db
      .select({ id: operations.id })
      .from(operations)
      .where(
        and(
          eq(operations.endpointId, sql.placeholder("endpointId")),
          lt(operations.createdUs, sql.placeholder("createdUs")),
          unfinishedOperation,
        ),
      )
      .limit(1)
      .prepare(),
  ).get({ endpointId: op.endpointId, createdUs: op.createdUs });
  return row !== undefined;
}

/** Next microsecond timestamp: the clock's time, or one past the newest operation, whichever is later. */
function nextCreatedUs(ctx: Ctx): number {
  const latest =
    prepared(ctx.db, "operations.latest", () =>
      ctx.db
        .select({ v: max(operations.createdUs) })
        .from(operations)
        .prepare(),
    ).get()?.v ?? 0;
  return Math.max(ctx.clock.now() * 1000, latest + 1);
}

const COLUMNS = [
  "id",
  "accountId",
  "projectId",
  "branchId",
  "endpointId",
  "action",
  "status",
  "failuresCount",
  "error",
  "createdUs",
  "updatedAt",
  "dueAt",
  "startedAt",
  "totalDurationMs",
] as const;

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
  prepared(ctx.db, "operations.insert", () =>
    ctx.db
      .insert(operations)
      .values(Object.fromEntries(COLUMNS.map((c) => [c, sql.placeholder(c)])) as never)
      .prepare(),
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

/** Unfinished operations of one endpoint, oldest first. */
export function unfinishedForEndpoint(tx: Tx, endpointId: string): OperationRow[] {
  return prepared(tx, "operations.unfinishedForEndpoint", () =>
    tx
      .select()
      .from(operations)
      .where(and(eq(operations.endpointId, sql.placeholder("endpointId")), unfinishedOperation))
      .orderBy(operations.createdUs)
      .prepare(),
  ).all({ endpointId });
}

/** Removes a deleted project's operations except `keep` (its delete_tenant operation, which still runs). */
export function deleteProjectOperations(tx: Tx, projectId: string, keep: string): void {
  tx.delete(operations)
    .where(and(eq(operations.projectId, projectId), ne(operations.id, keep)))
    .run();
}
