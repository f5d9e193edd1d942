import type { Ctx } from "../context.js";
import { startUnblockedOperations } from "../control-plane/operations/service.js";
import type { Tx } from "../platform/db.js";
import { statement } from "../platform/statements.js";
import { BATCH } from "./finish-operations.js";

/**
 * Checks fall on a grid of the interval (every hour on the hour by default), so all branches
 * are checked at the same moments: the next grid point after the last check (or creation).
 * Branches without an endpoint are not checked (specification: check_availability).
 */
const CHECK_DUE_AT = "(CAST(COALESCE(b.last_check_at, b.created_at) / @interval AS INTEGER) + 1) * @interval";
const HAS_ENDPOINT = "EXISTS (SELECT 1 FROM endpoints e WHERE e.branch_id = b.id)";

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

/** The next moment a check becomes due, or null when no branch has an endpoint. */
export function nextCheckAt(ctx: Ctx, tx: Tx): number | null {
  return (
    statement<{ t: number | null }>(
      tx,
      `SELECT MIN(${CHECK_DUE_AT}) AS t FROM branches b WHERE ${HAS_ENDPOINT}`,
    ).get({ interval: ctx.config.checkIntervalSeconds * 1000 })?.t ?? null
  );
}
