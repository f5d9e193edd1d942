import type { Ctx } from "../context.js";
import { pruneSamples } from "../control-plane/monitoring/store.js";
import type { Tx } from "../platform/db.js";
import { statement } from "../platform/statements.js";
import { inScope, type Scope } from "./finish-operations.js";

/** Rows one pass removes at most: the write lock is held for a moment, never for a whole backlog. */
const PRUNE_BATCH = 500;

/**
 * Operation history older than the retention (Neon removes operations older than six months)
 * goes, oldest first, so a sandbox advanced for years keeps a bounded table. Unfinished ones stay
 * whatever their age. Read through the created_us index: the oldest rows come first.
 */
export function pruneOperations(ctx: Ctx, tx: Tx, now: number, scope: Scope): number {
  const days = ctx.config.operationRetentionDays;
  if (days === 0) return 0;
  const beforeUs = (now - days * 86_400_000) * 1000;
  return statement(
    tx,
    `DELETE FROM operations WHERE id IN (
       SELECT id FROM operations WHERE created_us < @beforeUs AND status IN ('finished', 'failed')${inScope(scope)}
       ORDER BY created_us LIMIT ${PRUNE_BATCH})`,
  ).run({ beforeUs, account: scope }).changes;
}

/** Monitoring samples older than the same retention go the same way. */
export function pruneMonitoring(ctx: Ctx, tx: Tx, now: number, scope: Scope): number {
  const days = ctx.config.operationRetentionDays;
  if (days === 0) return 0;
  return pruneSamples(tx, scope, now - days * 86_400_000, PRUNE_BATCH);
}
