import { and, asc, eq, isNotNull, isNull, lte, ne, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { branches, endpoints, faults, operations, projects } from "../db/schema/index.js";
import { SUSPEND_DISABLED, SUSPEND_TIMEOUT_DEFAULT } from "../domain/compute.js";
import { stateAfter, targetState } from "../domain/endpoint-state.js";
import type { OperationAction } from "../domain/operations.js";
import { refreshPendingState } from "../repos/endpoints.js";
import { hasBlocker, type OperationRow, startOperation } from "../repos/operations.js";

/** How many rows one step claims at most, so a single transaction stays short. */
const BATCH = 500;

/** Auto-suspend delay in SQL: 0 means the default of 300 seconds. */
const suspendAfterMs = sql<number>`(CASE ${endpoints.suspendTimeoutSeconds} WHEN 0 THEN ${SUSPEND_TIMEOUT_DEFAULT} ELSE ${endpoints.suspendTimeoutSeconds} END) * 1000`;
const suspendDueAt = sql<number>`${endpoints.lastActive} + ${suspendAfterMs}`;

const suspendEligible = and(
  eq(endpoints.currentState, "active"),
  isNull(endpoints.pendingState),
  ne(endpoints.suspendTimeoutSeconds, SUSPEND_DISABLED),
  isNotNull(endpoints.lastActive),
);

function checkDueAt(intervalMs: number) {
  return sql<number>`COALESCE(${branches.lastCheckAt}, ${branches.createdAt}) + ${intervalMs}`;
}

const hasEndpoint = sql`EXISTS (SELECT 1 FROM ${endpoints} WHERE ${endpoints.branchId} = ${branches.id})`;

/** Takes one armed fault matching the operation, if any, and returns its message. */
function takeFault(tx: Tx, op: OperationRow): string | null {
  const fault = tx
    .select()
    .from(faults)
    .where(
      and(
        eq(faults.accountId, op.accountId),
        eq(faults.action, op.action),
        sql`(${faults.projectId} IS NULL OR ${faults.projectId} = ${op.projectId})`,
        sql`(${faults.endpointId} IS NULL OR ${faults.endpointId} = ${op.endpointId})`,
      ),
    )
    .orderBy(asc(faults.id))
    .get();
  if (!fault) return null;
  if (fault.remaining <= 1) tx.delete(faults).where(eq(faults.id, fault.id)).run();
  else
    tx.update(faults)
      .set({ remaining: fault.remaining - 1 })
      .where(eq(faults.id, fault.id))
      .run();
  return fault.message;
}

/** Applies a completed operation to the resource it acts on, in the same transaction. */
function applyEffects(tx: Tx, op: OperationRow, outcome: "finished" | "failed", now: number): void {
  if (op.endpointId && targetState(op.action)) {
    const endpoint = tx.select().from(endpoints).where(eq(endpoints.id, op.endpointId)).get();
    if (!endpoint) return; // deleted meanwhile: nothing to move
    const next = stateAfter(endpoint.currentState, op.action, outcome);
    const started = outcome === "finished" && op.action === "start_compute";
    const suspended = outcome === "finished" && op.action === "suspend_compute";
    tx.update(endpoints)
      .set({
        currentState: next,
        ...(started ? { lastActive: now, startedAt: now } : {}),
        ...(suspended ? { suspendedAt: now } : {}),
        updatedAt: now,
      })
      .where(eq(endpoints.id, endpoint.id))
      .run();
    if (started)
      tx.update(projects).set({ computeLastActiveAt: now }).where(eq(projects.id, op.projectId)).run();
    refreshPendingState(tx, { ...endpoint, currentState: next });
    return;
  }
  if (
    (op.action === "create_timeline" || op.action === "create_branch") &&
    op.branchId &&
    outcome === "finished"
  ) {
    tx.update(branches)
      .set({ currentState: "ready", pendingState: null, stateChangedAt: now })
      .where(eq(branches.id, op.branchId))
      .run();
  }
}

/** Completes running operations whose time has come; a matching armed fault makes one fail. */
export function finishDue(tx: Tx, now: number): number {
  const due = tx
    .select()
    .from(operations)
    .where(and(eq(operations.status, "running"), lte(operations.dueAt, now)))
    .orderBy(asc(operations.dueAt), asc(operations.createdUs))
    .limit(BATCH)
    .all();
  let done = 0;
  for (const op of due) {
    const error = takeFault(tx, op);
    const outcome = error ? "failed" : "finished";
    // Guarded by the claim: only a row still `running` moves, so nothing completes twice.
    const changed = tx
      .update(operations)
      .set({
        status: outcome,
        error,
        failuresCount: op.failuresCount + (error ? 1 : 0),
        updatedAt: now,
        dueAt: null,
        totalDurationMs: Math.max(0, now - (op.startedAt ?? now)),
      })
      .where(and(eq(operations.id, op.id), eq(operations.status, "running")))
      .run().changes;
    if (changed === 1) {
      applyEffects(tx, { ...op, status: outcome }, outcome, now);
      done++;
    }
  }
  return done;
}

/** Starts waiting operations whose predecessors have completed. */
export function promoteScheduled(ctx: Ctx, tx: Tx, now: number): number {
  const waiting = tx
    .select()
    .from(operations)
    .where(eq(operations.status, "scheduling"))
    .orderBy(asc(operations.createdUs))
    .limit(BATCH)
    .all();
  let promoted = 0;
  for (const op of waiting) {
    if (hasBlocker(tx, op)) continue;
    promoted += tx
      .update(operations)
      .set({
        status: "running",
        startedAt: now,
        dueAt: now + ctx.config.operationMs[op.action as OperationAction],
        updatedAt: now,
      })
      .where(and(eq(operations.id, op.id), eq(operations.status, "scheduling")))
      .run().changes;
  }
  return promoted;
}

/** Suspends active endpoints idle for their auto-suspend delay (never when it is -1). */
export function autoSuspend(ctx: Ctx, tx: Tx, now: number): number {
  const due = tx
    .select()
    .from(endpoints)
    .where(and(suspendEligible, lte(suspendDueAt, now)))
    .limit(BATCH)
    .all();
  for (const e of due) {
    startOperation(ctx, tx, {
      accountId: e.accountId,
      projectId: e.projectId,
      branchId: e.branchId,
      endpointId: e.id,
      action: "suspend_compute",
    });
    refreshPendingState(tx, e);
  }
  return due.length;
}

/** Periodic check_availability for each branch that has an endpoint. */
export function scheduleChecks(ctx: Ctx, tx: Tx, now: number): number {
  const intervalMs = ctx.config.checkIntervalSeconds * 1000;
  const due = tx
    .select({ id: branches.id, accountId: branches.accountId, projectId: branches.projectId })
    .from(branches)
    .where(and(hasEndpoint, lte(checkDueAt(intervalMs), now)))
    .limit(BATCH)
    .all();
  for (const b of due) {
    startOperation(ctx, tx, {
      accountId: b.accountId,
      projectId: b.projectId,
      branchId: b.id,
      action: "check_availability",
    });
    tx.update(branches).set({ lastCheckAt: now }).where(eq(branches.id, b.id)).run();
  }
  return due.length;
}

/** The earliest time at which anything becomes due, or null when nothing ever will. */
export function nextEventAt(ctx: Ctx, tx: Tx): number | null {
  const intervalMs = ctx.config.checkIntervalSeconds * 1000;
  const op = tx
    .select({ t: sql<number | null>`MIN(${operations.dueAt})` })
    .from(operations)
    .where(eq(operations.status, "running"))
    .get()?.t;
  const suspend = tx
    .select({ t: sql<number | null>`MIN(${suspendDueAt})` })
    .from(endpoints)
    .where(suspendEligible)
    .get()?.t;
  const check = tx
    .select({ t: sql<number | null>`MIN(${checkDueAt(intervalMs)})` })
    .from(branches)
    .where(hasEndpoint)
    .get()?.t;
  const times = [op, suspend, check].filter((t): t is number => typeof t === "number");
  // Waiting (scheduling) operations move only when another completes, a time already in `op`.
  return times.length ? Math.min(...times) : null;
}
