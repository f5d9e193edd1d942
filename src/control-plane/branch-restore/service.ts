import type { Ctx } from "../../context.js";
import { badRequest, conflict } from "../../errors.js";
import { operationsStarted } from "../../platform/events.js";
import { type BranchRow, requireSettledBranch, requireWritableProject } from "../access.js";
import { getAccount } from "../accounts/store.js";
import { historyPoint } from "../branches/history.js";
import { toBranchJson } from "../branches/render.js";
import { checkNotExpiring } from "../branches/rules.js";
import { addBranch } from "../branches/service.js";
import { findChild, moveChildren, updateBranchRow } from "../branches/store.js";
import { toOperationJson } from "../operations/render.js";
import { startOperation } from "../operations/service.js";
import type { OperationRow } from "../operations/store.js";
import { copyDatabases, copyDrops, copyRoles, replaceRolesAndDatabases } from "../roles-databases/store.js";
import type { BranchRestoreInput } from "./schema.js";

/**
 * POST /projects/{p}/branches/{b}/restore: the branch takes the data, roles and databases of the
 * source branch's head (its parent's, for a "reset from parent") and keeps its id, computes and
 * connection strings; with `preserve_under_name` its previous state becomes a new branch of that
 * name, which also takes its children. The data moves in the branch's create_branch operation
 * (its computes restart on the new data); until it finishes the branch is `init`.
 */
export function restoreBranch(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  input: BranchRestoreInput,
) {
  const { body, ops } = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const branch = requireSettledBranch(tx, accountId, projectId, branchId);
    if (branch.protected)
      throw conflict(`branch ${branchId} is protected and cannot be reset or restored; unprotect it first`);
    const self = input.source_branch_id === branchId;
    // Empty: no branch keeps the previous state ("if not empty", Neon's OpenAPI says).
    const preserve = input.preserve_under_name || undefined;
    if (self && input.source_lsn === undefined && input.source_timestamp === undefined)
      throw badRequest("restoring a branch from its own history needs source_lsn or source_timestamp");
    if (self && preserve === undefined)
      throw badRequest(
        "restoring a branch from its own history needs preserve_under_name (the branch that keeps its previous state)",
      );
    const source = self ? branch : requireSettledBranch(tx, accountId, projectId, input.source_branch_id);
    // The restored branch becomes the source's child.
    if (!self) checkNotExpiring(source);
    const at = historyPoint(
      ctx,
      tx,
      project,
      source,
      { lsn: input.source_lsn, timestamp: input.source_timestamp },
      { lsn: "source_lsn", timestamp: "source_timestamp" },
    );
    if (findChild(tx, branchId) !== undefined && preserve === undefined)
      throw badRequest(
        `branch ${branchId} has child branches: preserve_under_name is required (they move to the branch that keeps its previous state)`,
      );
    const now = ctx.clock.now(accountId);
    // A reset from the parent (to its head) gives an expiring branch its time to live again, counted from now.
    const resetFromParent = !self && source.id === branch.parentId && at.point === undefined;
    const ops: OperationRow[] = [];
    let kept: BranchRow | undefined;
    if (preserve !== undefined) {
      kept = addBranch(ctx, tx, project, {
        name: preserve,
        parentId: branch.parentId,
        // It is the branch's previous state: made from the same point of the same parent.
        parentLsn: branch.parentLsn ?? undefined,
        parentTimestamp: branch.parentTimestamp ?? undefined,
        dataSource: branch.id,
        // It is the branch's previous state, past and all.
        historySince: branch.historySince ?? branch.createdAt,
      });
      copyRoles(tx, branch.id, kept.id, now);
      copyDatabases(tx, branch.id, kept.id, now);
      copyDrops(tx, branch.id, kept);
      moveChildren(tx, branch.id, kept.id, now);
      ops.push(startOperation(ctx, tx, { accountId, projectId, branchId: kept.id, action: "create_branch" }));
    }
    // From its own history it keeps its roles and databases (its compute brings the data's to them).
    if (!self) replaceRolesAndDatabases(tx, source.id, branch, now);
    const next: BranchRow = {
      ...branch,
      // Restored from its own history, it becomes a child of the branch that keeps its previous state.
      parentId: self && kept ? kept.id : source.id,
      restoreSource: source.id,
      lastResetAt: now,
      historyPoint: at.point ?? null,
      historySince: now,
      // It takes the source's data, rows and all.
      initSource: "parent-data",
      parentTimestamp: at.parentTimestamp ?? now,
      // Asked for, or the source's once its data is copied (the compute driver reports it).
      parentLsn: at.parentLsn ?? null,
      currentState: "init",
      pendingState: "ready",
      stateChangedAt: now,
      updatedAt: now,
      ...(resetFromParent && branch.expiresAt !== null && branch.ttlSeconds !== null
        ? { expiresAt: now + branch.ttlSeconds * 1000 }
        : {}),
    };
    updateBranchRow(tx, next);
    ops.push(startOperation(ctx, tx, { accountId, projectId, branchId, action: "create_branch" }));
    return {
      body: {
        branch: toBranchJson(next, getAccount(tx, accountId).name),
        operations: ops.map(toOperationJson),
      },
      ops,
    };
  });
  return { body, events: operationsStarted(ops) };
}
