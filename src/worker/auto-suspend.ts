import type { Ctx } from "../context.js";
import { refreshPendingState, suspendDue } from "../control-plane/endpoints/store.js";
import { startOperation } from "../control-plane/operations/service.js";
import type { Tx } from "../platform/db.js";
import { BATCH, type Scope } from "./finish-operations.js";

/**
 * Suspends active endpoints idle for their auto-suspend delay (never when it is -1): a
 * suspend_compute operation each (the rule itself: control-plane/endpoints/rules.ts).
 */
export function autoSuspend(ctx: Ctx, tx: Tx, now: number, scope: Scope): number {
  const due = suspendDue(tx, now, BATCH, scope);
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
