import type { Ctx } from "../../context.js";
import { notFound } from "../../errors.js";
import type { Tx } from "../../platform/db.js";
import { type DomainEvent, operationsStarted } from "../../platform/events.js";
import {
  type BranchRow,
  conflictingOperations,
  findBranchById,
  type ProjectRow,
  readBranch,
  requireBranch,
  requireNotBeingRestored,
  requireProject,
  requireSettledBranch,
  requireWritableProject,
} from "../access.js";
import { getAccount } from "../accounts/store.js";
import { connectionDetails } from "../connection/render.js";
import { trafficByBranch, trafficOf } from "../consumption/meter.js";
import { endHistory } from "../consumption/storage.js";
import { toEndpointJson } from "../endpoints/render.js";
import { addEndpoint, projectMajor, requireSettingsTaken } from "../endpoints/service.js";
import { closeActivity, usageByBranch, usageOf } from "../endpoints/store.js";
import { requireBranchRoom } from "../limits.js";
import { toOperationJson } from "../operations/render.js";
import { startOperation } from "../operations/service.js";
import type { OperationRow } from "../operations/store.js";
import { toDatabaseJson, toRoleJson } from "../roles-databases/render.js";
import { renewPasswords } from "../roles-databases/service.js";
import { copyDatabases, copyDrops, copyRoles } from "../roles-databases/store.js";
import { historyPoint, requireInHistory } from "./history.js";
import { toAnnotationJson, toBranchJson } from "./render.js";
import {
  checkDeletable,
  checkExpiry,
  checkNotExpiring,
  decodeCursor,
  encodeCursor,
  expiryOf,
  newBranchRow,
  sortValue,
  ttlOf,
} from "./rules.js";
import type { BranchCreateInput, BranchListInput, BranchUpdateInput } from "./schema.js";
import {
  countBranchRows,
  deleteBranchRow,
  expiredBranches,
  findChild,
  findDataDependent,
  findDefaultBranch,
  insertBranch,
  listBranchRows,
  recordBranchData,
  setDefault,
  updateBranchRow,
} from "./store.js";

/** Adds a branch row inside the caller's transaction (a project create, a branch create, the seed). */
export function addBranch(
  ctx: Ctx,
  tx: Tx,
  project: Pick<ProjectRow, "id" | "accountId">,
  input: Omit<Parameters<typeof newBranchRow>[0], "id" | "accountId" | "projectId" | "now"> & { id?: string },
): BranchRow {
  requireBranchRoom(ctx, tx, project.id, getAccount(tx, project.accountId).plan);
  const row = newBranchRow({
    ...input,
    id: input.id ?? ctx.ids.branchId(),
    accountId: project.accountId,
    projectId: project.id,
    now: ctx.clock.now(project.accountId),
  });
  insertBranch(tx, row);
  return row;
}

/** GET /projects/{p}/branches/count: how many branches the project has (matching `search`). */
export function countBranches(ctx: Ctx, accountId: string, projectId: string, search: string | undefined) {
  requireProject(ctx.db, accountId, projectId);
  return { count: countBranchRows(ctx.db, projectId, search) };
}

export function listBranches(ctx: Ctx, accountId: string, projectId: string, q: BranchListInput) {
  requireProject(ctx.db, accountId, projectId);
  const sortBy = q.sort_by ?? "updated_at";
  const order = q.sort_order ?? "desc";
  const limit = q.limit ?? 10_000;
  const rows = listBranchRows(ctx.db, projectId, {
    search: q.search,
    sortBy,
    order,
    after: q.cursor ? decodeCursor(q.cursor, sortBy) : undefined,
    limit,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const annotations: Record<string, ReturnType<typeof toAnnotationJson>> = {};
  for (const b of page) if (b.annotations) annotations[b.id] = toAnnotationJson(b);
  const next = last && rows.length > limit ? encodeCursor(sortValue(last, sortBy), last.id) : undefined;
  const now = ctx.clock.now(accountId);
  const usage = usageByBranch(ctx.db, projectId, now);
  const traffic = trafficByBranch(ctx.db, projectId, now);
  const creator = getAccount(ctx.db, accountId).name;
  return {
    branches: page.map((b) => toBranchJson(b, creator, usage.get(b.id), traffic.get(b.id))),
    annotations,
    pagination: { ...(next ? { next } : {}), sort_by: sortBy, sort_order: order },
  };
}

/**
 * What a branch create checks before createBranch that needs the branch's data or Postgres (so it
 * is async): the point asked for lies in the parent's history, and Postgres takes the endpoints'
 * settings. Every caller (the API, the console) runs it: a point outside the history would make a
 * branch whose create_branch fails.
 */
export async function checkBranchCreate(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  input: BranchCreateInput,
): Promise<void> {
  const at = input.branch;
  await requireInHistory(
    ctx,
    accountId,
    projectId,
    at?.parent_id,
    { lsn: at?.parent_lsn, timestamp: at?.parent_timestamp },
    { lsn: "parent_lsn", timestamp: "parent_timestamp" },
  );
  await requireSettingsTaken(
    ctx,
    projectMajor(ctx, accountId, projectId),
    (input.endpoints ?? []).map((e) => e.settings?.pg_settings),
  );
}

export function createBranch(ctx: Ctx, accountId: string, projectId: string, input: BranchCreateInput) {
  const { body, ops } = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const account = getAccount(tx, accountId);
    const parent = input.branch?.parent_id
      ? requireBranch(tx, accountId, projectId, input.branch.parent_id)
      : findDefaultBranch(tx, projectId);
    if (!parent) throw notFound(`project ${projectId} has no default branch to branch from`);
    requireNotBeingRestored(tx, parent);
    const at = historyPoint(
      ctx,
      tx,
      project,
      parent,
      { lsn: input.branch?.parent_lsn, timestamp: input.branch?.parent_timestamp },
      { lsn: "parent_lsn", timestamp: "parent_timestamp" },
    );
    const expiresAt = expiryOf(input.branch?.expires_at, ctx.clock.now(accountId));
    checkExpiry({ expiresAt, protected: input.branch?.protected ?? false, isDefault: false }, undefined);
    checkNotExpiring(parent);
    // A schema-only branch is a root branch: the parent only gives it its schema, roles and databases.
    const schemaOnly = input.branch?.init_source === "schema-only";
    const branch = addBranch(ctx, tx, project, {
      name: input.branch?.name,
      parentId: schemaOnly ? null : parent.id,
      protected: input.branch?.protected,
      annotations: input.annotation_value,
      expiresAt,
      historyPoint: at.point,
      parentLsn: at.parentLsn,
      parentTimestamp: at.parentTimestamp,
      ...(schemaOnly ? { dataSource: parent.id, initSource: "schema-only" } : {}),
    });
    // A new branch starts as a copy of its parent's roles and databases.
    const now = ctx.clock.now(accountId);
    const copied = copyRoles(tx, parent.id, branch.id, now);
    const roles = parent.protected ? renewPasswords(ctx, tx, copied, now) : copied;
    const databases = copyDatabases(tx, parent.id, branch.id, now);
    copyDrops(tx, parent.id, branch);
    const ops: OperationRow[] = [
      startOperation(ctx, tx, { accountId, projectId, branchId: branch.id, action: "create_branch" }),
    ];
    const created = (input.endpoints ?? []).map((e) =>
      addEndpoint(ctx, tx, account.plan, project, branch.id, e),
    );
    for (const c of created) ops.push(...c.operations);
    const rw = created.find((c) => c.endpoint.type === "read_write")?.endpoint ?? created[0]?.endpoint;
    // The branch's first database with its owner (as a project's main branch is answered).
    const firstDb = databases[0];
    const owner = roles.find((r) => r.name === firstDb?.ownerName);
    const connection_uris =
      rw && owner && firstDb ? [connectionDetails(owner, rw, firstDb.name, ctx.config.frontDoor)] : undefined;
    const body = {
      branch: toBranchJson(branch, account.name),
      endpoints: created.map((c) => toEndpointJson(c.endpoint, { withPending: true })),
      operations: ops.map(toOperationJson),
      roles: roles.map((r) => toRoleJson(r)),
      databases: databases.map(toDatabaseJson),
      ...(connection_uris ? { connection_uris } : {}),
    };
    return { body, ops };
  });
  return { body, events: operationsStarted(ops) };
}

/** How long a branch create waits for its branch's data to be copied before it answers. */
const COPY_WAIT_MS = 2000;

/**
 * With real computes, a branch made from its parent's head has its data copied before its create
 * is answered (up to COPY_WAIT_MS): it holds the parent as it was when created, as on Neon, not as
 * it is when its create_branch operation comes due (on the manual clock, at an advance), and its
 * parent_lsn shows at once. A longer copy goes on; the operation finds it made.
 */
export async function copyParentNow<T extends { branch: { id: string; parent_lsn?: string | undefined } }>(
  ctx: Ctx,
  created: T,
): Promise<T> {
  const data = ctx.branchData;
  const row = data && findBranchById(ctx.db, created.branch.id);
  if (!data || !row?.parentId || row.historyPoint) return created;
  const copied = await data.makeNow(row.projectId, row.id, COPY_WAIT_MS);
  if (copied !== undefined) ctx.db.transaction((tx) => recordBranchData(tx, row.id, { parentLsn: copied }));
  // Its operation, due at once, may have taken the copy's LSN first.
  const lsn = copied ?? findBranchById(ctx.db, row.id)?.parentLsn;
  return lsn ? { ...created, branch: { ...created.branch, parent_lsn: lsn } } : created;
}

export function getBranch(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  const branch = readBranch(ctx.db, accountId, projectId, branchId);
  // The public schema requires `annotation`; a branch without annotations shows an empty value.
  const now = ctx.clock.now(accountId);
  const usage = usageOf(ctx.db, { branchId: branch.id }, now);
  const traffic = trafficOf(ctx.db, { branchId: branch.id }, now);
  const creator = getAccount(ctx.db, accountId).name;
  return { branch: toBranchJson(branch, creator, usage, traffic), annotation: toAnnotationJson(branch) };
}

export function updateBranch(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  input: BranchUpdateInput,
) {
  const next = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const branch = requireSettledBranch(tx, accountId, projectId, branchId);
    const now = ctx.clock.now(accountId);
    const expiresAt = input.expires_at === undefined ? branch.expiresAt : expiryOf(input.expires_at, now);
    const next: BranchRow = {
      ...branch,
      name: input.name ?? branch.name,
      protected: input.protected ?? branch.protected,
      expiresAt,
      ttlSeconds: input.expires_at === undefined ? branch.ttlSeconds : ttlOf(expiresAt, now),
      updatedAt: now,
    };
    // What the change sets is checked (an expiry, a protection), not what it leaves as it was.
    if (input.protected === true || (input.expires_at !== undefined && input.expires_at !== null))
      checkExpiry(next, next.expiresAt === null ? undefined : findChild(tx, branchId));
    updateBranchRow(tx, next);
    return next;
  });
  return {
    body: { branch: toBranchJson(next, getAccount(ctx.db, accountId).name), operations: [] },
    events: [],
  };
}

export function deleteBranch(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  const branch = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const branch = requireSettledBranch(tx, accountId, projectId, branchId);
    checkDeletable(branch, findChild(tx, branchId));
    // Another branch's data is still being made from this one's (its create_branch under way).
    if (findDataDependent(tx, projectId, branchId) !== undefined) throw conflictingOperations();
    removeBranch(tx, branch, ctx.clock.now(accountId));
    return branch;
  });
  return {
    body: { branch: toBranchJson(branch, getAccount(ctx.db, accountId).name), operations: [] },
    events: [{ type: "branch_deleted", projectId, branchId } as const],
  };
}

type BranchDeleted = Extract<DomainEvent, { type: "branch_deleted" }>;

/** Removes a branch (its endpoints, roles and databases go with its row) and ends what it counts. */
function removeBranch(tx: Tx, branch: BranchRow, now: number): void {
  deleteBranchRow(tx, branch.id);
  closeActivity(tx, { branchId: branch.id }, now);
  endHistory(tx, branch, now);
}

/**
 * Deletes the branches whose expires_at has passed by `now` (of the account `scope` names; null:
 * every account's), as Neon's background job does: each as a DELETE of it would be, once it can
 * be (a default or protected branch, one with children, one being made or whose data another's is
 * being made from, waits). Returns the events of those deleted, for the compute driver.
 */
export function expireBranches(tx: Tx, now: number, scope: string | null): BranchDeleted[] {
  const events: BranchDeleted[] = [];
  for (const branch of expiredBranches(tx, now, scope)) {
    removeBranch(tx, branch, now);
    events.push({ type: "branch_deleted", projectId: branch.projectId, branchId: branch.id });
  }
  return events;
}

export function setDefaultBranch(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  const next = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const branch = requireSettledBranch(tx, accountId, projectId, branchId);
    checkExpiry({ ...branch, isDefault: true }, undefined);
    const now = ctx.clock.now(accountId);
    setDefault(tx, projectId, branchId, now);
    return { ...branch, isDefault: true, updatedAt: now };
  });
  return {
    body: { branch: toBranchJson(next, getAccount(ctx.db, accountId).name), operations: [] },
    events: [],
  };
}
