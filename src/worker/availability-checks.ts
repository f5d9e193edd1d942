import type { Ctx } from "../context.js";
import { startUnblockedOperations } from "../control-plane/operations/service.js";
import type { Tx } from "../platform/db.js";
import { statement } from "../platform/statements.js";
import { BATCH, inScope, type Scope } from "./finish-operations.js";

/**
 * Checks fall on a grid of the interval (every hour on the hour by default), so all branches
 * are checked at the same moments: the next grid point after the last check (or creation).
 * Branches without an endpoint are not checked (specification: check_availability); their
 * check_base is null (branches/table.ts). The grid point after a base is due at `now` exactly when
 * the base lies before now's own grid point, so the due branches are a range of the index.
 */
const gridAfter = (base: number, interval: number) => (Math.floor(base / interval) + 1) * interval;

/** Periodic check_availability for each branch that has an endpoint. */
export function scheduleChecks(ctx: Ctx, tx: Tx, now: number, scope: Scope): number {
  const interval = ctx.config.checkIntervalSeconds * 1000;
  const due = statement<{ branchId: string; accountId: string; projectId: string }>(
    tx,
    `SELECT id AS branchId, account_id AS accountId, project_id AS projectId FROM branches
      WHERE check_base IS NOT NULL AND check_base < @before${inScope(scope)} ORDER BY check_base LIMIT ${BATCH}`,
  ).all({ before: Math.floor(now / interval) * interval, account: scope });
  if (due.length === 0) return 0;
  startUnblockedOperations(ctx, tx, "check_availability", due);
  statement(
    tx,
    `UPDATE branches SET last_check_at = @now, check_base = @now
      WHERE id IN (SELECT value FROM json_each(@ids))`,
  ).run({ now, ids: JSON.stringify(due.map((b) => b.branchId)) });
  return due.length;
}

/** The next moment a check becomes due, or null when no branch has an endpoint. */
export function nextCheckAt(ctx: Ctx, tx: Tx, scope: Scope): number | null {
  const base = statement<{ t: number | null }>(
    tx,
    `SELECT MIN(check_base) AS t FROM branches WHERE check_base IS NOT NULL${inScope(scope)}`,
  ).get({ account: scope })?.t;
  return base === null || base === undefined ? null : gridAfter(base, ctx.config.checkIntervalSeconds * 1000);
}
