import { and, asc, desc, eq, gt, lt, or, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { branches, databases, endpoints, roles } from "../db/schema/index.js";
import { badRequest, conflict, notFound } from "../lib/errors.js";
import { prepared } from "../lib/prepared.js";
import { toAnnotationJson, toBranchJson } from "../views/branches.js";
import { toEndpointJson } from "../views/endpoints.js";
import { toDatabaseJson, toRoleJson } from "../views/roles-databases.js";
import { getAccount } from "./accounts.js";
import { connectionDetails } from "./connection.js";
import { type EndpointInput, insertEndpoint } from "./endpoints.js";
import { type OperationRow, startOperation, toOperationJson } from "./operations.js";
import { type ProjectRow, requireProject, requireWritableProject } from "./projects.js";
import { contains, uniqueOrConflict } from "./sql.js";

export type BranchRow = typeof branches.$inferSelect;

export function findDefaultBranch(tx: Tx, projectId: string): BranchRow | undefined {
  return tx
    .select()
    .from(branches)
    .where(and(eq(branches.projectId, projectId), eq(branches.isDefault, true)))
    .get();
}

export function requireBranch(tx: Tx, accountId: string, projectId: string, branchId: string): BranchRow {
  const row = prepared(tx, "branches.require", () =>
    tx
      .select()
      .from(branches)
      .where(
        and(
          eq(branches.id, sql.placeholder("branchId")),
          eq(branches.projectId, sql.placeholder("projectId")),
          eq(branches.accountId, sql.placeholder("accountId")),
        ),
      )
      .prepare(),
  ).get({ branchId, projectId, accountId });
  if (!row) throw branchNotFound(projectId, branchId);
  return row;
}

export const branchNotFound = (projectId: string, branchId: string) =>
  notFound(`branch ${branchId} not found in project ${projectId}`);

export function insertBranch(
  ctx: Ctx,
  tx: Tx,
  project: ProjectRow,
  input: {
    name?: string | undefined;
    parentId: string | null;
    isDefault?: boolean;
    protected?: boolean | undefined;
    annotations?: Record<string, string> | undefined;
    expiresAt?: number | null | undefined;
    id?: string;
  },
): BranchRow {
  const now = ctx.clock.now();
  const id = input.id ?? ctx.ids.branchId();
  const row: BranchRow = {
    id,
    accountId: project.accountId,
    projectId: project.id,
    parentId: input.parentId,
    name: input.name ?? id,
    isDefault: input.isDefault ?? false,
    protected: input.protected ?? false,
    // A branch is `init` until its create_timeline/create_branch operation finishes.
    currentState: "init",
    pendingState: "ready",
    stateChangedAt: now,
    creationSource: "console",
    parentLsn: input.parentId ? "0/1F2E3D4" : null,
    parentTimestamp: input.parentId ? now : null,
    logicalSize: 0,
    expiresAt: input.expiresAt ?? null,
    annotations: input.annotations && Object.keys(input.annotations).length ? input.annotations : null,
    lastCheckAt: null,
    createdAt: now,
    updatedAt: now,
  };
  uniqueOrConflict(
    () => tx.insert(branches).values(row).run(),
    () => `a branch named "${row.name}" already exists in project ${project.id}`,
  );
  return row;
}

type SortBy = "name" | "created_at" | "updated_at";
const SORT_COLUMNS = { name: branches.name, created_at: branches.createdAt, updated_at: branches.updatedAt };

function encodeCursor(value: string | number, id: string): string {
  return Buffer.from(JSON.stringify([value, id])).toString("base64url");
}

function decodeCursor(cursor: string, sortBy: SortBy): [string | number, string] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[1] === "string" &&
      (sortBy === "name" ? typeof parsed[0] === "string" : Number.isInteger(parsed[0]))
    )
      return parsed as [string | number, string];
  } catch {
    // fall through to the error below
  }
  throw badRequest("cursor is not a pagination.next value of this listing (same sort_by and sort_order)");
}

export function listBranches(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  q: {
    search?: string | undefined;
    sort_by?: SortBy | undefined;
    sort_order?: "asc" | "desc" | undefined;
    limit?: number | undefined;
    cursor?: string | undefined;
  },
) {
  requireProject(ctx.db, accountId, projectId);
  const sortBy = q.sort_by ?? "updated_at";
  const order = q.sort_order ?? "desc";
  const column = SORT_COLUMNS[sortBy];
  const cmp = order === "asc" ? gt : lt;
  let after: [string | number, string] | undefined;
  if (q.cursor) after = decodeCursor(q.cursor, sortBy);
  const limit = q.limit ?? 10_000;
  const rows = ctx.db
    .select()
    .from(branches)
    .where(
      and(
        eq(branches.projectId, projectId),
        q.search ? or(contains(branches.name, q.search), contains(branches.id, q.search)) : undefined,
        after ? or(cmp(column, after[0]), and(eq(column, after[0]), cmp(branches.id, after[1]))) : undefined,
      ),
    )
    .orderBy(
      order === "asc" ? asc(column) : desc(column),
      order === "asc" ? asc(branches.id) : desc(branches.id),
    )
    .limit(limit + 1)
    .all();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const annotations: Record<string, ReturnType<typeof toAnnotationJson>> = {};
  for (const b of page) if (b.annotations) annotations[b.id] = toAnnotationJson(b);
  const next =
    last && rows.length > limit
      ? encodeCursor(
          sortBy === "name" ? last.name : sortBy === "created_at" ? last.createdAt : last.updatedAt,
          last.id,
        )
      : undefined;
  return {
    branches: page.map(toBranchJson),
    annotations,
    pagination: { ...(next ? { next } : {}), sort_by: sortBy, sort_order: order },
  };
}

export interface CreateBranchInput {
  branch?:
    | {
        parent_id?: string | undefined;
        name?: string | undefined;
        protected?: boolean | undefined;
        expires_at?: string | undefined;
      }
    | undefined;
  endpoints?: EndpointInput[] | undefined;
  annotation_value?: Record<string, string> | undefined;
}

export function createBranch(ctx: Ctx, accountId: string, projectId: string, input: CreateBranchInput) {
  const out = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const account = getAccount(tx, accountId);
    const parent = input.branch?.parent_id
      ? requireBranch(tx, accountId, projectId, input.branch.parent_id)
      : findDefaultBranch(tx, projectId);
    if (!parent) throw notFound(`project ${projectId} has no default branch to branch from`);
    const expiresAt = input.branch?.expires_at ? Date.parse(input.branch.expires_at) : null;
    if (expiresAt !== null && expiresAt <= ctx.clock.now())
      throw badRequest("branch.expires_at must be in the future");
    const branch = insertBranch(ctx, tx, project, {
      name: input.branch?.name,
      parentId: parent.id,
      protected: input.branch?.protected,
      annotations: input.annotation_value,
      expiresAt,
    });
    // A new branch starts as a copy of its parent's roles and databases.
    const now = ctx.clock.now();
    const parentRoles = tx.select().from(roles).where(eq(roles.branchId, parent.id)).all();
    const roleCopies = parentRoles.map((r) => ({
      ...r,
      branchId: branch.id,
      createdAt: now,
      updatedAt: now,
    }));
    if (roleCopies.length) tx.insert(roles).values(roleCopies).run();
    const dbCopies = tx
      .select()
      .from(databases)
      .where(eq(databases.branchId, parent.id))
      .all()
      .map(({ id: _id, ...d }) => ({ ...d, branchId: branch.id, createdAt: now, updatedAt: now }));
    const insertedDbs = dbCopies.length ? tx.insert(databases).values(dbCopies).returning().all() : [];
    const ops: OperationRow[] = [
      startOperation(ctx, tx, { accountId, projectId, branchId: branch.id, action: "create_branch" }),
    ];
    const created = (input.endpoints ?? []).map((e) => insertEndpoint(ctx, tx, account, project, branch, e));
    for (const c of created) ops.push(...c.operations);
    const rw = created.find((c) => c.endpoint.type === "read_write")?.endpoint ?? created[0]?.endpoint;
    const owner = roleCopies[0];
    const firstDb = insertedDbs[0];
    const connection_uris = rw && owner && firstDb ? [connectionDetails(owner, rw, firstDb.name)] : undefined;
    return {
      branch: toBranchJson(branch),
      endpoints: created.map((c) => toEndpointJson(c.endpoint, { withPending: true })),
      operations: ops.map(toOperationJson),
      roles: roleCopies.map((r) => toRoleJson(r)),
      databases: insertedDbs.map(toDatabaseJson),
      ...(connection_uris ? { connection_uris } : {}),
    };
  });
  ctx.notify();
  return out;
}

export function getBranch(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  requireProject(ctx.db, accountId, projectId);
  const branch = requireBranch(ctx.db, accountId, projectId, branchId);
  // The public schema requires `annotation`; a branch without annotations shows an empty value.
  return { branch: toBranchJson(branch), annotation: toAnnotationJson(branch) };
}

export function updateBranch(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  input: {
    name?: string | undefined;
    protected?: boolean | undefined;
    expires_at?: string | null | undefined;
  },
) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const branch = requireBranch(tx, accountId, projectId, branchId);
    let expiresAt = branch.expiresAt;
    if (input.expires_at === null) expiresAt = null;
    else if (input.expires_at !== undefined) {
      expiresAt = Date.parse(input.expires_at);
      if (expiresAt <= ctx.clock.now()) throw badRequest("branch.expires_at must be in the future");
    }
    const next: BranchRow = {
      ...branch,
      name: input.name ?? branch.name,
      protected: input.protected ?? branch.protected,
      expiresAt,
      updatedAt: ctx.clock.now(),
    };
    uniqueOrConflict(
      () => tx.update(branches).set(next).where(eq(branches.id, branchId)).run(),
      () => `a branch named "${next.name}" already exists in project ${projectId}`,
    );
    return { branch: toBranchJson(next), operations: [] };
  });
}

export function deleteBranch(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const branch = requireBranch(tx, accountId, projectId, branchId);
    if (branch.isDefault)
      throw conflict(
        `branch ${branchId} is the project's default branch and cannot be deleted; set another branch as default first`,
      );
    if (branch.protected) throw conflict(`branch ${branchId} is protected; unprotect it before deleting it`);
    const child = tx
      .select({ id: branches.id })
      .from(branches)
      .where(eq(branches.parentId, branchId))
      .limit(1)
      .get();
    if (child) throw conflict(`branch ${branchId} has child branches (e.g. ${child.id}); delete them first`);
    // Endpoints, roles and databases of the branch go with it (foreign keys cascade).
    tx.delete(branches).where(eq(branches.id, branchId)).run();
    return { branch: toBranchJson(branch), operations: [] };
  });
}

export function setDefaultBranch(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const branch = requireBranch(tx, accountId, projectId, branchId);
    const now = ctx.clock.now();
    tx.update(branches)
      .set({ isDefault: false, updatedAt: now })
      .where(and(eq(branches.projectId, projectId), eq(branches.isDefault, true)))
      .run();
    const next = { ...branch, isDefault: true, updatedAt: now };
    tx.update(branches).set({ isDefault: true, updatedAt: now }).where(eq(branches.id, branchId)).run();
    return { branch: toBranchJson(next), operations: [] };
  });
}

export function listBranchEndpoints(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  requireProject(ctx.db, accountId, projectId);
  requireBranch(ctx.db, accountId, projectId, branchId);
  const rows = ctx.db
    .select()
    .from(endpoints)
    .where(eq(endpoints.branchId, branchId))
    .orderBy(asc(endpoints.createdAt), asc(endpoints.id))
    .all();
  return { endpoints: rows.map((r) => toEndpointJson(r, { withPending: false })) };
}
