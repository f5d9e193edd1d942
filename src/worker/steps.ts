import { and, asc, eq, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { SUSPEND_DUE_AT_SQL, SUSPEND_ELIGIBLE_SQL } from "../db/schema/endpoints.js";
import { faults } from "../db/schema/index.js";
import { UNFINISHED_OPERATION_SQL } from "../db/schema/operations.js";
import { type EndpointState, pendingStateOf, stateAfter, targetState } from "../domain/endpoint-state.js";
import { OPERATION_ACTIONS, type OperationAction } from "../domain/operations.js";
import { prepared, statement } from "../lib/prepared.js";
import { refreshPendingState } from "../repos/endpoints.js";
import {
  hasBlocker,
  OPERATION_COLUMNS,
  type OperationRow,
  startOperation,
  startUnblockedOperations,
  unfinishedActions,
} from "../repos/operations.js";

// The worker's statements are raw SQL prepared once: a 7-day advance runs tens of thousands of
// them, and Drizzle's per-row mapping would cost more than the statements themselves. Conditions
// spell out the literals of the partial indexes they are meant to use (see the schema).

/** How many rows one step claims at most, so a single transaction stays short. */
const BATCH = 500;

/**
 * Checks fall on a grid of the interval (every hour on the hour by default), so all branches
 * are checked at the same moments: the next grid point after the last check (or creation).
 */
const CHECK_DUE_AT = "(CAST(COALESCE(b.last_check_at, b.created_at) / @interval AS INTEGER) + 1) * @interval";
const HAS_ENDPOINT = "EXISTS (SELECT 1 FROM endpoints e WHERE e.branch_id = b.id)";

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

/** Whether completing an operation of this action changes more than its own row (see applyEffects). */
function changesResources(action: OperationAction): boolean {
  return targetState(action) !== null || action === "create_timeline" || action === "create_branch";
}

/** Actions whose completion changes only the operation row, as SQL literals. */
const ROW_ONLY_ACTIONS_SQL = OPERATION_ACTIONS.filter((a) => !changesResources(a))
  .map((a) => `'${a}'`)
  .join(", ");

/**
 * Applies a completed operation to the resource it acts on, in the same transaction. A project
 * whose compute started is added to `started`: the caller stamps each such project once.
 */
function applyEffects(
  tx: Tx,
  op: OperationRow,
  outcome: "finished" | "failed",
  now: number,
  started: Set<string>,
): void {
  if (!changesResources(op.action)) return;
  if (op.endpointId && targetState(op.action)) {
    const endpoint = statement<{ id: string; currentState: EndpointState }>(
      tx,
      "SELECT id, current_state AS currentState FROM endpoints WHERE id = @id",
    ).get({ id: op.endpointId });
    if (!endpoint) return; // deleted meanwhile: nothing to move
    const next = stateAfter(endpoint.currentState, op.action, outcome);
    const didStart = outcome === "finished" && op.action === "start_compute";
    const suspended = outcome === "finished" && op.action === "suspend_compute";
    // The operation is no longer unfinished: what remains decides the pending state, written in
    // the same statement as the new current state.
    const pending = pendingStateOf(unfinishedActions(tx, endpoint.id));
    statement(
      tx,
      `UPDATE endpoints SET current_state = @next, pending_state = @pending, updated_at = @now,
         last_active = CASE WHEN @started THEN @now ELSE last_active END,
         started_at = CASE WHEN @started THEN @now ELSE started_at END,
         suspended_at = CASE WHEN @suspended THEN @now ELSE suspended_at END
       WHERE id = @id`,
    ).run({ next, pending, now, started: didStart ? 1 : 0, suspended: suspended ? 1 : 0, id: endpoint.id });
    if (didStart) started.add(op.projectId);
    return;
  }
  if (
    (op.action === "create_timeline" || op.action === "create_branch") &&
    op.branchId &&
    outcome === "finished"
  ) {
    statement(
      tx,
      "UPDATE branches SET current_state = 'ready', pending_state = NULL, state_changed_at = @now WHERE id = @id",
    ).run({ now, id: op.branchId });
  }
}

/** Completes running operations whose time has come; a matching armed fault makes one fail. */
export function finishDue(ctx: Ctx, tx: Tx, now: number): number {
  // Armed faults are rare: look for one per operation only when any exists.
  const anyFault = statement(tx, "SELECT 1 FROM faults LIMIT 1").get() !== undefined;
  // Without a fault to take, operations that change nothing else (the periodic checks above all)
  // finish in one statement; the rest, one by one below, in due order.
  let done = anyFault
    ? 0
    : statement(
        tx,
        `UPDATE operations SET status = 'finished', updated_at = @now, due_at = NULL,
           total_duration_ms = max(0, @now - ifnull(started_at, @now))
         WHERE ${UNFINISHED_OPERATION_SQL} AND status = 'running' AND due_at <= @now
           AND action IN (${ROW_ONLY_ACTIONS_SQL})`,
      ).run({ now }).changes;
  const due = statement<OperationRow>(
    tx,
    `SELECT ${OPERATION_COLUMNS} FROM operations
      WHERE ${UNFINISHED_OPERATION_SQL} AND status = 'running' AND due_at <= @now
      ORDER BY due_at, created_us LIMIT ${BATCH}`,
  ).all({ now });
  if (due.length === 0) return done;
  // Guarded by the claim: only a row still `running` moves, so nothing completes twice.
  const complete = statement(
    tx,
    `UPDATE operations SET status = @status, error = @error, failures_count = @failures,
       updated_at = @now, due_at = NULL, total_duration_ms = @duration
     WHERE id = @id AND status = 'running'`,
  );
  const started = new Set<string>();
  for (const op of due) {
    const error = anyFault ? takeFault(ctx, tx, op) : null;
    const outcome = error ? "failed" : "finished";
    const changed = complete.run({
      id: op.id,
      status: outcome,
      error,
      failures: op.failuresCount + (error ? 1 : 0),
      now,
      duration: Math.max(0, now - (op.startedAt ?? now)),
    }).changes;
    if (changed === 1) {
      applyEffects(tx, { ...op, status: outcome }, outcome, now, started);
      done++;
    }
  }
  const stamp = statement(tx, "UPDATE projects SET compute_last_active_at = @now WHERE id = @id");
  for (const id of started) stamp.run({ now, id });
  return done;
}

/** Starts waiting operations whose predecessors have completed. */
export function promoteScheduled(ctx: Ctx, tx: Tx, now: number): number {
  const waiting = statement<Pick<OperationRow, "id" | "action" | "endpointId" | "createdUs">>(
    tx,
    `SELECT id, action, endpoint_id AS endpointId, created_us AS createdUs FROM operations
      WHERE ${UNFINISHED_OPERATION_SQL} AND status = 'scheduling' ORDER BY created_us LIMIT ${BATCH}`,
  ).all();
  if (waiting.length === 0) return 0;
  const start = statement(
    tx,
    `UPDATE operations SET status = 'running', started_at = @now, due_at = @dueAt, updated_at = @now
      WHERE id = @id AND status = 'scheduling'`,
  );
  let promoted = 0;
  for (const op of waiting) {
    if (hasBlocker(ctx, op)) continue;
    promoted += start.run({
      id: op.id,
      now,
      dueAt: now + ctx.config.operationMs[op.action as OperationAction],
    }).changes;
  }
  return promoted;
}

/** Suspends active endpoints idle for their auto-suspend delay (never when it is -1). */
export function autoSuspend(ctx: Ctx, tx: Tx, now: number): number {
  const due = statement<{
    id: string;
    accountId: string;
    projectId: string;
    branchId: string;
    pendingState: EndpointState | null;
  }>(
    tx,
    `SELECT id, account_id AS accountId, project_id AS projectId, branch_id AS branchId,
            pending_state AS pendingState
       FROM endpoints INDEXED BY endpoints_suspend_due_idx
      WHERE ${SUSPEND_ELIGIBLE_SQL} AND ${SUSPEND_DUE_AT_SQL} <= @now
      LIMIT ${BATCH}`,
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
  const due = statement<{ branchId: string; accountId: string; projectId: string }>(
    tx,
    `SELECT b.id AS branchId, b.account_id AS accountId, b.project_id AS projectId FROM branches b
      WHERE ${HAS_ENDPOINT} AND ${CHECK_DUE_AT} <= @now LIMIT ${BATCH}`,
  ).all({ now, interval: ctx.config.checkIntervalSeconds * 1000 });
  if (due.length === 0) return 0;
  startUnblockedOperations(ctx, tx, "check_availability", due);
  statement(
    tx,
    "UPDATE branches SET last_check_at = @now WHERE id IN (SELECT value FROM json_each(@ids))",
  ).run({ now, ids: JSON.stringify(due.map((b) => b.branchId)) });
  return due.length;
}

/** The earliest time at which anything becomes due, or null when nothing ever will. */
export function nextEventAt(ctx: Ctx): number | null {
  const db = ctx.db;
  const op = statement<{ t: number | null }>(
    db,
    `SELECT MIN(due_at) AS t FROM operations WHERE ${UNFINISHED_OPERATION_SQL} AND status = 'running'`,
  ).get()?.t;
  const suspend = statement<{ t: number | null }>(
    db,
    `SELECT MIN(${SUSPEND_DUE_AT_SQL}) AS t FROM endpoints INDEXED BY endpoints_suspend_due_idx
      WHERE ${SUSPEND_ELIGIBLE_SQL}`,
  ).get()?.t;
  const check = statement<{ t: number | null }>(
    db,
    `SELECT MIN(${CHECK_DUE_AT}) AS t FROM branches b WHERE ${HAS_ENDPOINT}`,
  ).get({ interval: ctx.config.checkIntervalSeconds * 1000 })?.t;
  const times = [op, suspend, check].filter((t): t is number => typeof t === "number");
  // Waiting (scheduling) operations move only when another completes, a time already in `op`.
  return times.length ? Math.min(...times) : null;
}
