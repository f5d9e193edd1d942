import type { Ctx } from "../context.js";
import { suspendProjectEndpoints } from "../control-plane/endpoints/service.js";
import { quotaUsage } from "../control-plane/endpoints/store.js";
import { quotaOf, quotaReachedAt, reachedQuota } from "../control-plane/projects/quota.js";
import { monthStartOf } from "../control-plane/projects/render.js";
import { quotaProjects } from "../control-plane/projects/store.js";
import type { Tx } from "../platform/db.js";
import type { Scope } from "./finish-operations.js";

/** Each project with a quota and a compute heading for active, its quota, and what it used this period. */
function* projectsWithQuota(tx: Tx, now: number, scope: Scope) {
  for (const p of quotaProjects(tx, scope)) {
    const quota = quotaOf(p.quota);
    if (quota) yield { id: p.id, quota, usage: quotaUsage(tx, p.id, now, monthStartOf(now)) };
  }
}

/**
 * Suspends the computes of every project whose quota (settings.quota) is used up in the current
 * consumption period: a suspend_compute operation each, as the API's description of ProjectQuota
 * says. Starting them again is refused until the quota is raised or the period ends.
 */
export function quotaSuspend(ctx: Ctx, tx: Tx, now: number, scope: Scope): number {
  let moved = 0;
  for (const p of projectsWithQuota(tx, now, scope))
    if (reachedQuota(p.quota, p.usage)) moved += suspendProjectEndpoints(ctx, tx, p.id).length;
  return moved;
}

/**
 * The earliest moment, after `now`, a running project's computes use up its quota if they keep
 * running. One already used up is quotaSuspend's at this moment's pass, never a moment again: a
 * manual advance stops at each moment until nothing is due, so a due time that stayed due would
 * hold it forever.
 */
export function nextQuotaAt(tx: Tx, now: number, scope: Scope): number | null {
  let next: number | null = null;
  for (const p of projectsWithQuota(tx, now, scope)) {
    const at = quotaReachedAt(p.quota, p.usage, now);
    if (at !== null && at > now && (next === null || at < next)) next = at;
  }
  return next;
}
