import { and, asc, eq, isNotNull, isNull, lte, ne, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { branches, endpoints, faults, operations, projects } from "../db/schema/index.js";
import { SUSPEND_DISABLED, SUSPEND_TIMEOUT_DEFAULT } from "../domain/compute.js";
import { stateAfter, targetState } from "../domain/endpoint-state.js";
import type { OperationAction } from "../domain/operations.js";
import { prepared } from "../lib/prepared.js";
import { refreshPendingState } from "../repos/endpoints.js";
import { hasBlocker, type OperationRow, startOperation, unfinishedOperation } from "../repos/operations.js";

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

/**
 * Checks fall on a grid of the interval (every hour on the hour by default), so all branches
 * are checked at the same moments: the next grid point after the last check (or creation).
 */
const checkDueAt = sql<number>`(CAST(COALESCE(${branches.lastCheckAt}, ${branches.createdAt}) / ${sql.placeholder("interval")} AS INTEGER) + 1) * ${sql.placeholder("interval")}`;

const hasEndpoint = sql`EXISTS (SELECT 1 FROM ${endpoints} WHERE ${endpoints.branchId} = ${branches.id})`;

/** Takes one armed fault matching the operation, if any, and returns its message. */
function takeFault(ctx: Ctx, tx: Tx, op: OperationRow): string | null {
  const fault = prepared(ctx.db, "worker.fault", () =>
    ctx.db
      .select()
      .from(faults)
      .where(
        and(
          eq(faults.accountId, sql.placeholder("accountId")),
          eq(faults.action, sql.placeholder("action")),
          sql`(${faults.projectId} IS NULL OR ${faults.projectId} = ${sql.placeholder("projectId")})`,
          sql`(${faults.endpointId} IS NULL OR ${faults.endpointId} = ${sql.placeholder("endpointId")})`,
        ),
      )
      .orderBy(asc(faults.id))
      .prepare(),
  ).get({ accountId: op.accountId, action: op.action, projectId: op.projectId, endpointId: op.endpointId });
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
export function finishDue(ctx: Ctx, tx: Tx, now: number): number {
  const due = prepared(ctx.db, "worker.due", () =>
    ctx.db
      .select()
      .from(operations)
      .where(
        and(
          unfinishedOperation,
          eq(operations.status, "running"),
          lte(operations.dueAt, sql.placeholder("now")),
        ),
      )
      .orderBy(asc(operations.dueAt), asc(operations.createdUs))
      .limit(BATCH)
      .prepare(),
  ).all({ now });
  const complete = prepared(ctx.db, "worker.complete", () =>
    ctx.db
      .update(operations)
      .set({
        status: sql`${sql.placeholder("status")}`,
        error: sql`${sql.placeholder("error")}`,
        failuresCount: sql`${sql.placeholder("failures")}`,
        updatedAt: sql`${sql.placeholder("now")}`,
        dueAt: null,
        totalDurationMs: sql`${sql.placeholder("duration")}`,
      })
      .where(and(eq(operations.id, sql.placeholder("id")), eq(operations.status, "running")))
      .prepare(),
  );
  // Armed faults are rare: look for one per operation only when any exists.
  const anyFault =
    due.length > 0 &&
    prepared(ctx.db, "worker.anyFault", () =>
      ctx.db.select({ id: faults.id }).from(faults).limit(1).prepare(),
    ).get() !== undefined;
  let done = 0;
  for (const op of due) {
    const error = anyFault ? takeFault(ctx, tx, op) : null;
    const outcome = error ? "failed" : "finished";
    // Guarded by the claim: only a row still `running` moves, so nothing completes twice.
    const changed = complete.run({
      id: op.id,
      status: outcome,
      error,
      failures: op.failuresCount + (error ? 1 : 0),
      now,
      duration: Math.max(0, now - (op.startedAt ?? now)),
    }).changes;
    if (changed === 1) {
      applyEffects(tx, { ...op, status: outcome }, outcome, now);
      done++;
    }
  }
  return done;
}

/** Starts waiting operations whose predecessors have completed. */
export function promoteScheduled(ctx: Ctx, tx: Tx, now: number): number {
  const waiting = prepared(ctx.db, "worker.waiting", () =>
    ctx.db
      .select()
      .from(operations)
      .where(and(unfinishedOperation, eq(operations.status, "scheduling")))
      .orderBy(asc(operations.createdUs))
      .limit(BATCH)
      .prepare(),
  ).all();
  let promoted = 0;
  for (const op of waiting) {
    if (hasBlocker(ctx, op)) continue;
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
  const due = prepared(ctx.db, "worker.suspendDue", () =>
    ctx.db
      .select()
      .from(endpoints)
      .where(and(suspendEligible, lte(suspendDueAt, sql.placeholder("now"))))
      .limit(BATCH)
      .prepare(),
  ).all({ now });
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
  const due = prepared(ctx.db, "worker.checksDue", () =>
    ctx.db
      .select({ id: branches.id, accountId: branches.accountId, projectId: branches.projectId })
      .from(branches)
      .where(and(hasEndpoint, lte(checkDueAt, sql.placeholder("now"))))
      .limit(BATCH)
      .prepare(),
  ).all({ now, interval: ctx.config.checkIntervalSeconds * 1000 });
  const checked = prepared(ctx.db, "worker.checked", () =>
    ctx.db
      .update(branches)
      .set({ lastCheckAt: sql`${sql.placeholder("now")}` })
      .where(eq(branches.id, sql.placeholder("id")))
      .prepare(),
  );
  for (const b of due) {
    startOperation(ctx, tx, {
      accountId: b.accountId,
      projectId: b.projectId,
      branchId: b.id,
      action: "check_availability",
    });
    checked.run({ now, id: b.id });
  }
  return due.length;
}

/** The earliest time at which anything becomes due, or null when nothing ever will. */
export function nextEventAt(ctx: Ctx): number | null {
  const db = ctx.db;
  const op = prepared(db, "worker.nextOp", () =>
    db
      .select({ t: sql<number | null>`MIN(${operations.dueAt})` })
      .from(operations)
      .where(and(unfinishedOperation, eq(operations.status, "running")))
      .prepare(),
  ).get()?.t;
  const suspend = prepared(db, "worker.nextSuspend", () =>
    db
      .select({ t: sql<number | null>`MIN(${suspendDueAt})` })
      .from(endpoints)
      .where(suspendEligible)
      .prepare(),
  ).get()?.t;
  const check = prepared(db, "worker.nextCheck", () =>
    db
      .select({ t: sql<number | null>`MIN(${checkDueAt})` })
      .from(branches)
      .where(hasEndpoint)
      .prepare(),
  ).get({ interval: ctx.config.checkIntervalSeconds * 1000 })?.t;
  const times = [op, suspend, check].filter((t): t is number => typeof t === "number");
  // Waiting (scheduling) operations move only when another completes, a time already in `op`.
  return times.length ? Math.min(...times) : null;
}
