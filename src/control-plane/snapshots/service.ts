import type { Ctx } from "../../context.js";
import { badRequest, conflict, notFound } from "../../errors.js";
import { iso } from "../../platform/clock.js";
import type { Tx } from "../../platform/db.js";
import { type DomainEvent, operationsStarted } from "../../platform/events.js";
import {
  type BranchRow,
  conflictingOperations,
  findBranchById,
  readBranch,
  requireBranch,
  requireProject,
  requireSettledBranch,
  requireWritableProject,
} from "../access.js";
import { getAccount } from "../accounts/store.js";
import { historyPoint, requireInHistory } from "../branches/history.js";
import { toBranchJson } from "../branches/render.js";
import { checkNotExpiring } from "../branches/rules.js";
import { addBranch } from "../branches/service.js";
import { findDataDependent, setDefault, updateBranchRow } from "../branches/store.js";
import { snapshotDeleted, snapshotExpires, snapshotKept } from "../consumption/storage.js";
import { moveBranchEndpoints } from "../endpoints/service.js";
import { toOperationJson } from "../operations/render.js";
import { startOperation } from "../operations/service.js";
import type { OperationRow } from "../operations/store.js";
import { catalogOf, insertCatalog } from "../roles-databases/store.js";
import type {
  BackupScheduleInput,
  SnapshotCreateInput,
  SnapshotRestoreInput,
  SnapshotUpdateInput,
} from "./schema.js";
import {
  deleteExpiredSnapshots,
  deleteSnapshotRow,
  findSchedule,
  findSnapshot,
  insertSnapshot,
  listSnapshotRows,
  type SnapshotRow,
  saveSchedule,
  updateSnapshotRow,
} from "./store.js";

/**
 * Snapshots (beta in the public API): a branch's data frozen when taken, kept until deleted or
 * expired; restoring one makes a new branch from it, which can then replace the branch it was
 * restored for (finalize_restore). Backup schedules are stored per branch.
 */

export const snapshotNotFound = (projectId: string, snapshotId: string) =>
  notFound(`snapshot ${snapshotId} not found in project ${projectId}`);

function toSnapshotJson(row: SnapshotRow) {
  return {
    id: row.id,
    name: row.name,
    ...(row.lsn ? { lsn: row.lsn } : {}),
    timestamp: iso(row.takenAt),
    source_branch_id: row.sourceBranchId,
    created_at: iso(row.createdAt),
    ...(row.expiresAt !== null ? { expires_at: iso(row.expiresAt) } : {}),
    manual: row.manual,
    ...(row.fullSize !== null ? { full_size: row.fullSize } : {}),
  };
}

/** A time in the future, or a 400 naming the field. */
function futureTime(text: string, now: number, field: string): number {
  const at = Date.parse(text);
  if (!Number.isFinite(at)) throw badRequest(`${field} must be an ISO 8601 time`);
  if (at <= now) throw badRequest(`${field} must be in the future`);
  return at;
}

/** Whether a branch is being restored from the snapshot: its files are copied until that create_branch finishes. */
function restoreUnderWay(ctx: Ctx, tx: Tx, projectId: string, snapshotId: string): boolean {
  return ctx.branchData !== undefined && findDataDependent(tx, projectId, snapshotId) !== undefined;
}

/**
 * Expired snapshots go when the project's snapshots are next looked at (their folders with them);
 * one a branch is being restored from goes once that restore finishes.
 */
function sweepExpired(ctx: Ctx, accountId: string, projectId: string): DomainEvent[] {
  const gone = ctx.db.transaction((tx) =>
    deleteExpiredSnapshots(
      tx,
      projectId,
      ctx.clock.now(accountId),
      (snapshotId) => !restoreUnderWay(ctx, tx, projectId, snapshotId),
    ),
  );
  return gone.map((snapshotId) => ({ type: "snapshot_deleted" as const, projectId, snapshotId }));
}

/**
 * POST …/branches/{b}/snapshot: the branch's data as it is now. With real computes its folder is
 * copied (a consistent copy, running or not) before the answer; the snapshot keeps the branch's
 * roles and databases too.
 */
export async function createSnapshot(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  query: SnapshotCreateInput,
) {
  const now = ctx.clock.now(accountId);
  const expiresAt = query.expires_at === undefined ? null : futureTime(query.expires_at, now, "expires_at");
  await requireInHistory(ctx, accountId, projectId, branchId, query, { lsn: "lsn", timestamp: "timestamp" });
  const { row, point } = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const branch = requireSettledBranch(tx, accountId, projectId, branchId);
    // A point of the branch's history (checked as a branch create's parent_lsn/parent_timestamp).
    const at = historyPoint(ctx, tx, project, branch, query, { lsn: "lsn", timestamp: "timestamp" });
    const row: SnapshotRow = {
      id: ctx.ids.snapshotId(),
      accountId,
      projectId,
      sourceBranchId: branchId,
      name: query.name ?? `${branch.name} ${iso(now)}`,
      lsn: at.parentLsn ?? null,
      takenAt: at.parentTimestamp ?? now,
      expiresAt,
      manual: true,
      fullSize: null,
      catalog: catalogOf(tx, branchId),
      createdAt: now,
    };
    insertSnapshot(tx, row);
    return { row, point: at.point };
  });
  if (!ctx.branchData) return { snapshot: toSnapshotJson(row), operations: [] };
  let data: { lsn: string; size: number };
  try {
    data = await ctx.branchData.snapshot(projectId, branchId, row.id, point);
  } catch (err) {
    ctx.db.transaction((tx) => deleteSnapshotRow(tx, row.id));
    // Its project or branch deleted while its data was copied (a reset, a delete): that is the
    // answer (404), not the copy's failure to find the folder.
    ctx.db.transaction((tx) => requireSettledBranch(tx, accountId, projectId, branchId));
    throw err;
  }
  // As it is now: renamed, given an expiry or deleted while its data was copied.
  const taken = ctx.db.transaction((tx) => {
    const current = findSnapshot(tx, projectId, row.id);
    if (!current) return undefined;
    const next = { ...current, lsn: data.lsn, fullSize: data.size };
    updateSnapshotRow(tx, next);
    snapshotKept(tx, { ...next, bytes: data.size, since: next.createdAt, until: next.expiresAt });
    return next;
  });
  return {
    snapshot: toSnapshotJson(taken ?? { ...row, lsn: data.lsn, fullSize: data.size }),
    operations: [],
  };
}

export function listSnapshots(ctx: Ctx, accountId: string, projectId: string) {
  requireProject(ctx.db, accountId, projectId);
  const events = sweepExpired(ctx, accountId, projectId);
  return { body: { snapshots: listSnapshotRows(ctx.db, projectId).map(toSnapshotJson) }, events };
}

export function updateSnapshot(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  snapshotId: string,
  input: SnapshotUpdateInput,
) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const row = findSnapshot(tx, projectId, snapshotId);
    if (!row) throw snapshotNotFound(projectId, snapshotId);
    const next: SnapshotRow = {
      ...row,
      name: input.name ?? row.name,
      expiresAt:
        input.expires_at === undefined
          ? row.expiresAt
          : input.expires_at === null
            ? null
            : futureTime(input.expires_at, ctx.clock.now(accountId), "expires_at"),
    };
    updateSnapshotRow(tx, next);
    snapshotExpires(tx, snapshotId, next.expiresAt);
    return { snapshot: toSnapshotJson(next) };
  });
}

export function deleteSnapshot(ctx: Ctx, accountId: string, projectId: string, snapshotId: string) {
  ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    if (!findSnapshot(tx, projectId, snapshotId)) throw snapshotNotFound(projectId, snapshotId);
    if (restoreUnderWay(ctx, tx, projectId, snapshotId)) throw conflictingOperations();
    deleteSnapshotRow(tx, snapshotId);
    snapshotDeleted(tx, snapshotId, ctx.clock.now(accountId));
  });
  return { body: { operations: [] }, events: [{ type: "snapshot_deleted" as const, projectId, snapshotId }] };
}

/**
 * POST /projects/{p}/snapshots/{s}/restore: a new branch (child of the target branch: the
 * snapshot's source unless `target_branch_id` names another) with the snapshot's data, roles and
 * databases, made by its create_branch operation. With `finalize_restore` it replaces the target
 * at once (finalizeRestore).
 */
export function restoreSnapshot(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  snapshotId: string,
  input: SnapshotRestoreInput & { legacyName?: string | undefined },
) {
  const { body, ops } = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const snapshot = findSnapshot(tx, projectId, snapshotId);
    if (!snapshot || (snapshot.expiresAt !== null && snapshot.expiresAt <= ctx.clock.now(accountId)))
      throw snapshotNotFound(projectId, snapshotId);
    // Its data is copied before its size is known: one still being taken, or one the emulator
    // stopped while taking (its copy cut short and removed at the next start), has none to give.
    if (ctx.branchData && snapshot.fullSize === null)
      throw conflict(
        `snapshot ${snapshotId} holds no data: it is still being taken, or its copy was cut short when the emulator stopped (delete it)`,
      );
    if (input.target_branch_id === undefined && !findBranchById(tx, snapshot.sourceBranchId))
      throw notFound(
        `the branch snapshot ${snapshotId} was taken of (${snapshot.sourceBranchId}) no longer exists; name the branch to restore it onto in target_branch_id`,
      );
    const targetId = input.target_branch_id ?? snapshot.sourceBranchId;
    const target = requireSettledBranch(tx, accountId, projectId, targetId);
    // The restored branch becomes the target's child.
    checkNotExpiring(target);
    const now = ctx.clock.now(accountId);
    const restored = addBranch(ctx, tx, project, {
      name: input.name ?? input.legacyName ?? `${target.name}_from_${snapshot.name}`,
      parentId: target.id,
      dataSource: snapshot.id,
    });
    const next: BranchRow = {
      ...restored,
      parentLsn: snapshot.lsn ?? restored.parentLsn,
      parentTimestamp: snapshot.takenAt,
      restoreStatus: "restored",
      restoredFrom: snapshot.id,
      restoreTarget: target.id,
    };
    updateBranchRow(tx, next);
    insertCatalog(tx, next, snapshot.catalog, now);
    const ops = [
      startOperation(ctx, tx, { accountId, projectId, branchId: next.id, action: "create_branch" }),
    ];
    let branch = next;
    if (input.finalize_restore) {
      const finalized = finalize(ctx, tx, next, undefined);
      branch = finalized.branch;
      ops.push(...finalized.ops);
    }
    return {
      body: {
        branch: toBranchJson(branch, getAccount(tx, accountId).name),
        operations: ops.map(toOperationJson),
      },
      ops,
    };
  });
  return { body, events: operationsStarted(ops) };
}

/**
 * POST …/branches/{b}/finalize_restore: a branch restored from a snapshot takes the place of the
 * branch it was restored for: that branch's computes move to it (restarting on its data), it
 * takes that branch's name (and default flag, and parent), and that branch is renamed (`name`, or
 * `<name>_old_<time>`).
 */
export function finalizeRestore(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  name: string | undefined,
) {
  const ops = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    return finalize(ctx, tx, requireBranch(tx, accountId, projectId, branchId), name).ops;
  });
  return { body: { operations: ops.map(toOperationJson) }, events: operationsStarted(ops) };
}

function finalize(
  ctx: Ctx,
  tx: Tx,
  branch: BranchRow,
  name: string | undefined,
): { branch: BranchRow; ops: OperationRow[] } {
  if (branch.restoreStatus !== "restored" || !branch.restoreTarget)
    throw badRequest(
      `branch ${branch.id} was not restored from a snapshot, or its restore is finalized already`,
    );
  const target = requireBranch(tx, branch.accountId, branch.projectId, branch.restoreTarget);
  // Replacing it takes its computes and its place: a reset, which a protected branch refuses.
  if (target.protected)
    throw conflict(
      `branch ${target.id} is protected and cannot be replaced by a restore; unprotect it first, or restore without finalize_restore`,
    );
  const now = ctx.clock.now(branch.accountId);
  const stamp = iso(now).replace(/[-:]/g, "").replace(/\..*$/, "");
  updateBranchRow(tx, { ...target, name: name ?? `${target.name}_old_${stamp}`, updatedAt: now });
  const next: BranchRow = {
    ...branch,
    name: target.name,
    parentId: target.parentId,
    restoreStatus: "finalized",
    updatedAt: now,
  };
  updateBranchRow(tx, next);
  if (target.isDefault) setDefault(tx, branch.projectId, branch.id, now);
  const ops = moveBranchEndpoints(ctx, tx, target.id, branch.id);
  return { branch: { ...next, isDefault: target.isDefault || next.isDefault }, ops };
}

export function getBackupSchedule(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  readBranch(ctx.db, accountId, projectId, branchId);
  // Stored as validated by BackupSchedule.
  return { schedule: (findSchedule(ctx.db, branchId) ?? []) as BackupScheduleInput["schedule"] };
}

export function setBackupSchedule(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  input: BackupScheduleInput,
) {
  ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    requireBranch(tx, accountId, projectId, branchId);
    saveSchedule(tx, {
      branchId,
      accountId,
      projectId,
      schedule: input.schedule,
      updatedAt: ctx.clock.now(accountId),
    });
  });
  return {};
}
