import { and, desc, eq, inArray, lt, max, ne, or } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { operations } from "../db/schema/index.js";
import { BRANCH_BLOCKING_ACTIONS, type OperationAction } from "../domain/operations.js";
import { iso, isoMicros, parseIsoMicros } from "../lib/clock.js";
import { badRequest, notFound } from "../lib/errors.js";
import { requireProject } from "./projects.js";

export type OperationRow = typeof operations.$inferSelect;

export interface NewOperation {
  accountId: string;
  projectId: string;
  branchId: string | null;
  endpointId?: string | null;
  action: OperationAction;
}

const UNFINISHED = ["scheduling", "running"] as const;

/**
 * True when an earlier unfinished operation must complete first: one on the same endpoint, or a
 * branch creation (create_timeline/create_branch) on the same branch.
 */
export function hasBlocker(tx: Tx, op: Pick<OperationRow, "branchId" | "endpointId" | "createdUs">): boolean {
  const conditions = [];
  if (op.endpointId) conditions.push(eq(operations.endpointId, op.endpointId));
  if (op.branchId)
    conditions.push(
      and(eq(operations.branchId, op.branchId), inArray(operations.action, [...BRANCH_BLOCKING_ACTIONS])),
    );
  if (conditions.length === 0) return false;
  const row = tx
    .select({ id: operations.id })
    .from(operations)
    .where(
      and(
        inArray(operations.status, [...UNFINISHED]),
        lt(operations.createdUs, op.createdUs),
        or(...conditions),
      ),
    )
    .limit(1)
    .get();
  return row !== undefined;
}

/** Next microsecond timestamp: the clock's time, or one past the newest operation, whichever is later. */
function nextCreatedUs(ctx: Ctx, tx: Tx): number {
  const latest =
    tx
      .select({ v: max(operations.createdUs) })
      .from(operations)
      .get()?.v ?? 0;
  return Math.max(ctx.clock.now() * 1000, latest + 1);
}

/**
 * Records an operation inside the caller's transaction. It starts `running` unless an earlier
 * operation blocks it, in which case it waits as `scheduling` for the worker to promote it.
 */
export function startOperation(ctx: Ctx, tx: Tx, input: NewOperation): OperationRow {
  const now = ctx.clock.now();
  const createdUs = nextCreatedUs(ctx, tx);
  const endpointId = input.endpointId ?? null;
  const blocked = hasBlocker(tx, { branchId: input.branchId, endpointId, createdUs });
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
  tx.insert(operations).values(row).run();
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
  const rows = ctx.db
    .select()
    .from(operations)
    .where(
      and(
        eq(operations.projectId, projectId),
        before === null ? undefined : lt(operations.createdUs, before),
      ),
    )
    .orderBy(desc(operations.createdUs))
    .limit(limit)
    .all();
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
  return tx
    .select()
    .from(operations)
    .where(and(eq(operations.endpointId, endpointId), inArray(operations.status, [...UNFINISHED])))
    .orderBy(operations.createdUs)
    .all();
}

/** Removes a deleted project's operations except `keep` (its delete_tenant operation, which still runs). */
export function deleteProjectOperations(tx: Tx, projectId: string, keep: string): void {
  tx.delete(operations)
    .where(and(eq(operations.projectId, projectId), ne(operations.id, keep)))
    .run();
}
