import type { ComputeDriver, EffectResult } from "../compute/driver.js";
import type { Ctx } from "../context.js";
import { markReady, recordBranchData } from "../control-plane/branches/store.js";
import { pendingStateOf, stateAfter, targetState } from "../control-plane/endpoints/rules.js";
import { readState, recordState } from "../control-plane/endpoints/store.js";
import { recordSample } from "../control-plane/monitoring/store.js";
import {
  type ComputeEffect,
  EFFECT_ACTIONS,
  effectOf,
  OPERATION_ACTIONS,
  type OperationAction,
  STATE_CHANGING_ACTIONS,
  UNFINISHED_OPERATION_SQL,
} from "../control-plane/operations/rules.js";
import {
  hasUnfinishedBefore,
  OPERATION_COLUMNS,
  type OperationRow,
  unfinishedActions,
} from "../control-plane/operations/store.js";
import { purgeDeletedProject } from "../control-plane/projects/recovery-store.js";
import { stampComputeActive } from "../control-plane/projects/store.js";
import { applyUndo, takeUndo } from "../control-plane/roles-databases/store.js";
import { anyFaultArmed, takeFault } from "../emulator/faults-store.js";
import type { Tx } from "../platform/db.js";
import { statement } from "../platform/statements.js";

// The worker's statements are raw SQL prepared once: a 7-day advance runs tens of thousands of
// them, and Drizzle's per-row mapping would cost more than the statements themselves. Conditions
// spell out the literals of the partial indexes they are meant to use (see the tables).

/** How many rows one step claims at most, so a single transaction stays short. */
/**
 * Whose rows a worker pass moves: one account's (with a manual clock each account has its own
 * time, so a pass runs at that time and touches that account alone) or every account's (null:
 * the real clock, the same for all).
 */
export type Scope = string | null;

/** The SQL condition a scoped statement adds (bound as @account). */
export function inScope(scope: Scope): string {
  return scope === null ? "" : " AND account_id = @account";
}

export const BATCH = 500;

/** An operation whose effect the driver performs outside the transaction that claimed it. */
export interface Claimed {
  op: OperationRow;
  effect: ComputeEffect;
  claim: string;
}

type Outcome = "finished" | "failed";

/**
 * Moves the resource an operation acts on, in the transaction that completes the operation. A
 * project whose compute started is added to `started`: the caller stamps each such project once.
 */
function applyToResources(
  tx: Tx,
  op: OperationRow,
  outcome: Outcome,
  now: number,
  started: Set<string>,
): void {
  if (op.endpointId && targetState(op.action)) {
    const endpoint = readState(tx, op.endpointId);
    if (!endpoint) return; // deleted meanwhile: nothing to move
    const didStart = outcome === "finished" && op.action === "start_compute";
    recordState(tx, {
      id: endpoint.id,
      next: stateAfter(endpoint.currentState, op.action, outcome),
      // The operation is no longer unfinished: what remains decides the pending state.
      pending: pendingStateOf(unfinishedActions(tx, endpoint.id)),
      now,
      started: didStart,
      suspended: outcome === "finished" && op.action === "suspend_compute",
    });
    if (didStart) started.add(op.projectId);
    return;
  }
  if (
    (op.action === "create_timeline" || op.action === "create_branch") &&
    op.branchId &&
    outcome === "finished"
  )
    markReady(tx, op.branchId, now);
}

/** Completes one operation if it is still running (and, when given, still under `claim`). */
function complete(
  tx: Tx,
  op: OperationRow,
  outcome: Outcome,
  error: string | null,
  now: number,
  started: Set<string>,
  result?: EffectResult,
): boolean {
  const changed = statement(
    tx,
    `UPDATE operations SET status = @status, error = @error, failures_count = @failures,
       updated_at = @now, due_at = NULL, total_duration_ms = @duration, claim = NULL
     WHERE id = @id AND status = 'running' AND claim IS @claim`,
  ).run({
    id: op.id,
    status: outcome,
    error,
    failures: op.failuresCount + (outcome === "failed" ? 1 : 0),
    now,
    duration: Math.max(0, now - (op.startedAt ?? now)),
    claim: op.claim,
  }).changes;
  if (changed !== 1) return false;
  if (STATE_CHANGING_ACTIONS.includes(op.action)) applyToResources(tx, op, outcome, now, started);
  if (op.action === "apply_config") {
    // A refused change to roles or databases is taken back: nothing half-applied in the API's view.
    const undo = takeUndo(tx, op.id);
    if (undo && outcome === "failed") applyUndo(tx, undo.branchId, undo.undo, now);
  }
  if (result?.branch) {
    recordBranchData(tx, result.branch.id, result.branch);
    if (result.branch.logicalSize !== undefined)
      recordSample(tx, {
        accountId: op.accountId,
        projectId: op.projectId,
        subjectId: result.branch.id,
        metric: "logical_size",
        at: now,
        value: result.branch.logicalSize,
      });
  }
  // The stored data is gone: the project can no longer be recovered.
  if (op.action === "delete_tenant" && outcome === "finished") purgeDeletedProject(tx, op.projectId);
  return true;
}

function stampStarted(tx: Tx, started: Set<string>, now: number): void {
  for (const id of started) stampComputeActive(tx, id, now);
}

/**
 * Completes running operations whose time has come. A matching armed fault fails one without its
 * effect. An operation with an effect is finalized here when the driver performs effects inline;
 * otherwise it is claimed (a token written to its row) and returned for the worker to perform
 * outside this transaction and finalize with finalizeClaimed.
 */
export function finishDue(
  tx: Tx,
  driver: ComputeDriver,
  now: number,
  newClaim: () => string,
  scope: Scope,
): { moved: number; claimed: Claimed[] } {
  // Armed faults are rare: look for one per operation only when any exists.
  const anyFault = anyFaultArmed(tx);
  // Without a fault to take, operations whose completion changes nothing else (the periodic checks
  // above all) finish in one statement; the rest, one by one below, in due order.
  let moved = anyFault
    ? 0
    : statement(
        tx,
        `UPDATE operations SET status = 'finished', updated_at = @now, due_at = NULL,
           total_duration_ms = max(0, @now - ifnull(started_at, @now))
         WHERE ${UNFINISHED_OPERATION_SQL} AND status = 'running' AND due_at <= @now AND claim IS NULL
           AND action IN (${rowOnlyActionsSql(driver)})${inScope(scope)}`,
      ).run({ now, account: scope }).changes;
  const due = statement<OperationRow>(
    tx,
    `SELECT ${OPERATION_COLUMNS} FROM operations
      WHERE ${UNFINISHED_OPERATION_SQL} AND status = 'running' AND due_at <= @now AND claim IS NULL${inScope(scope)}
      ORDER BY due_at, created_us LIMIT ${BATCH}`,
  ).all({ now, account: scope });
  const claimed: Claimed[] = [];
  const started = new Set<string>();
  const claimStatement = statement(
    tx,
    "UPDATE operations SET claim = @claim WHERE id = @id AND status = 'running' AND claim IS NULL",
  );
  for (const op of due) {
    const error = anyFault ? takeFault(tx, op) : null;
    if (error) {
      if (complete(tx, op, "failed", error, now, started)) moved++;
      continue;
    }
    const effect = effectOf(op);
    if (effect && !driver.inline) {
      const claim = newClaim();
      if (claimStatement.run({ claim, id: op.id }).changes === 1) {
        claimed.push({ op: { ...op, claim }, effect, claim });
        moved++;
      }
      continue;
    }
    const result = effect ? (driver.perform(effect) as EffectResult | undefined) : undefined;
    if (complete(tx, op, "finished", null, now, started, result)) moved++;
  }
  stampStarted(tx, started, now);
  return { moved, claimed };
}

/**
 * Finalizes a claimed operation once its effect settled: only while the claim still holds (the
 * operation was not completed, deleted with its project, or released after a restart meanwhile).
 */
export function finalizeClaimed(
  tx: Tx,
  claimed: Claimed,
  outcome: Outcome,
  error: string | null,
  now: number,
  result?: EffectResult,
): boolean {
  const started = new Set<string>();
  const done = complete(tx, claimed.op, outcome, error, now, started, result);
  stampStarted(tx, started, now);
  return done;
}

/** Releases claims a previous process left (it stopped mid-effect): their operations become due again. */
export function releaseClaims(tx: Tx): number {
  return statement(tx, "UPDATE operations SET claim = NULL WHERE claim IS NOT NULL").run().changes;
}

/** Starts waiting operations whose predecessors have completed. */
export function promoteScheduled(ctx: Ctx, tx: Tx, now: number, scope: Scope): number {
  const waiting = statement<Pick<OperationRow, "id" | "action" | "endpointId" | "createdUs">>(
    tx,
    // One account's waiting operations through its index of unfinished ones (by created_us alone,
    // SQLite would walk the account's whole history).
    `SELECT id, action, endpoint_id AS endpointId, created_us AS createdUs
       FROM operations${scope === null ? "" : " INDEXED BY operations_account_pending_idx"}
      WHERE ${UNFINISHED_OPERATION_SQL} AND status = 'scheduling'${inScope(scope)}
      ORDER BY created_us LIMIT ${BATCH}`,
  ).all({ account: scope });
  if (waiting.length === 0) return 0;
  const start = statement(
    tx,
    `UPDATE operations SET status = 'running', started_at = @now, due_at = @dueAt, updated_at = @now
      WHERE id = @id AND status = 'scheduling'`,
  );
  let promoted = 0;
  for (const op of waiting) {
    if (op.endpointId && hasUnfinishedBefore(tx, op.endpointId, op.createdUs)) continue;
    promoted += start.run({ id: op.id, now, dueAt: now + ctx.config.operationMs[op.action] }).changes;
  }
  return promoted;
}

/** The earliest due time of a running, unclaimed operation. */
export function nextOperationDueAt(tx: Tx, scope: Scope): number | null {
  return (
    statement<{ t: number | null }>(
      tx,
      `SELECT MIN(due_at) AS t FROM operations
        WHERE ${UNFINISHED_OPERATION_SQL} AND status = 'running' AND claim IS NULL${inScope(scope)}`,
    ).get({ account: scope })?.t ?? null
  );
}

/**
 * Actions whose completion changes only the operation row, as SQL literals: those that move no
 * other row (apply_config removes its undo) and, unless the driver performs effects inline, have no effect.
 */
function rowOnlyActions(inline: boolean): string {
  return OPERATION_ACTIONS.filter(
    (a: OperationAction) =>
      !STATE_CHANGING_ACTIONS.includes(a) && a !== "apply_config" && (inline || !EFFECT_ACTIONS.includes(a)),
  )
    .map((a) => `'${a}'`)
    .join(", ");
}

/** Built once: the worker's every pass uses one of the two. */
const ROW_ONLY_ACTIONS_SQL = { inline: rowOnlyActions(true), outside: rowOnlyActions(false) };

function rowOnlyActionsSql(driver: ComputeDriver): string {
  return driver.inline ? ROW_ONLY_ACTIONS_SQL.inline : ROW_ONLY_ACTIONS_SQL.outside;
}

/** The endpoint's own operations and those making or replacing its branch's data (a connection waits on both). */
const CONNECTION_WAITS_ON_SQL = `(endpoint_id = @id OR (branch_id = (SELECT branch_id FROM endpoints WHERE id = @id)
  AND action IN ('create_branch', 'create_timeline')))`;

/**
 * A client waits on an endpoint's operations (a connection waking it) and on its branch's data
 * being made or replaced: those running and unclaimed become due at `now`. Returns how many are
 * unfinished.
 */
export function dueNowForEndpoint(tx: Tx, endpointId: string, now: number): number {
  statement(
    tx,
    `UPDATE operations SET due_at = @now
      WHERE ${UNFINISHED_OPERATION_SQL} AND ${CONNECTION_WAITS_ON_SQL} AND status = 'running'
        AND claim IS NULL AND due_at > @now`,
  ).run({ id: endpointId, now });
  return (
    statement<{ n: number }>(
      tx,
      `SELECT count(*) AS n FROM operations WHERE ${UNFINISHED_OPERATION_SQL} AND ${CONNECTION_WAITS_ON_SQL}`,
    ).get({ id: endpointId })?.n ?? 0
  );
}
