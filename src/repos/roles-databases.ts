import { and, asc, eq, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { databases, roles } from "../db/schema/index.js";
import { conflict, notFound } from "../lib/errors.js";
import { toDatabaseJson, toRoleJson } from "../views/roles-databases.js";
import { type BranchRow, requireBranch } from "./branches.js";
import { startOperation, toOperationJson } from "./operations.js";
import { requireProject, requireWritableProject } from "./projects.js";
import { uniqueOrConflict } from "./sql.js";

export type RoleRow = typeof roles.$inferSelect;
export type DatabaseRow = typeof databases.$inferSelect;

export function insertRole(
  ctx: Ctx,
  tx: Tx,
  branch: BranchRow,
  input: { name: string; noLogin?: boolean; password?: string },
): RoleRow {
  const now = ctx.clock.now();
  const row: RoleRow = {
    accountId: branch.accountId,
    projectId: branch.projectId,
    branchId: branch.id,
    name: input.name,
    password: input.password ?? ctx.ids.password(),
    protected: false,
    noLogin: input.noLogin ?? false,
    createdAt: now,
    updatedAt: now,
  };
  uniqueOrConflict(
    () => tx.insert(roles).values(row).run(),
    () => `role "${input.name}" already exists on branch ${branch.id}`,
  );
  return row;
}

function requireRole(tx: Tx, branchId: string, name: string): RoleRow {
  const row = tx
    .select()
    .from(roles)
    .where(and(eq(roles.branchId, branchId), eq(roles.name, name)))
    .get();
  if (!row) throw notFound(`role "${name}" not found on branch ${branchId}`);
  return row;
}

export function insertDatabase(
  ctx: Ctx,
  tx: Tx,
  branch: BranchRow,
  input: { name: string; ownerName: string },
): DatabaseRow {
  // A database's owner must exist on the branch.
  requireRole(tx, branch.id, input.ownerName);
  const now = ctx.clock.now();
  return uniqueOrConflict(
    () =>
      tx
        .insert(databases)
        .values({
          accountId: branch.accountId,
          projectId: branch.projectId,
          branchId: branch.id,
          name: input.name,
          ownerName: input.ownerName,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
        .get(),
    () => `database "${input.name}" already exists on branch ${branch.id}`,
  );
}

function requireDatabase(tx: Tx, branchId: string, name: string): DatabaseRow {
  const row = tx
    .select()
    .from(databases)
    .where(and(eq(databases.branchId, branchId), eq(databases.name, name)))
    .get();
  if (!row) throw notFound(`database "${name}" not found on branch ${branchId}`);
  return row;
}

/** Runs a change to roles or databases of a branch with its apply_config operation, in one transaction. */
function withApplyConfig<T extends object>(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  change: (tx: Tx, branch: BranchRow) => T,
) {
  const out = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const branch = requireBranch(tx, accountId, projectId, branchId);
    const result = change(tx, branch);
    const op = startOperation(ctx, tx, { accountId, projectId, branchId, action: "apply_config" });
    return { ...result, operations: [toOperationJson(op)] };
  });
  ctx.notify();
  return out;
}

function readBranch(ctx: Ctx, accountId: string, projectId: string, branchId: string): BranchRow {
  requireProject(ctx.db, accountId, projectId);
  return requireBranch(ctx.db, accountId, projectId, branchId);
}

// Roles

export function listRoles(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  readBranch(ctx, accountId, projectId, branchId);
  const rows = ctx.db
    .select()
    .from(roles)
    .where(eq(roles.branchId, branchId))
    .orderBy(asc(roles.createdAt), sql`rowid`)
    .all();
  return { roles: rows.map((r) => toRoleJson(r)) };
}

export function getRole(ctx: Ctx, accountId: string, projectId: string, branchId: string, name: string) {
  readBranch(ctx, accountId, projectId, branchId);
  return { role: toRoleJson(requireRole(ctx.db, branchId, name)) };
}

export function createRole(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  input: { name: string; no_login?: boolean | undefined },
) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx, branch) => ({
    role: toRoleJson(insertRole(ctx, tx, branch, { name: input.name, noLogin: input.no_login ?? false }), {
      withPassword: true,
    }),
  }));
}

export function deleteRole(ctx: Ctx, accountId: string, projectId: string, branchId: string, name: string) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx) => {
    const role = requireRole(tx, branchId, name);
    const owned = tx
      .select({ name: databases.name })
      .from(databases)
      .where(and(eq(databases.branchId, branchId), eq(databases.ownerName, name)))
      .get();
    if (owned)
      throw conflict(
        `role "${name}" owns database "${owned.name}"; delete the database or change its owner first`,
      );
    tx.delete(roles)
      .where(and(eq(roles.branchId, branchId), eq(roles.name, name)))
      .run();
    return { role: toRoleJson(role) };
  });
}

export function revealRolePassword(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  name: string,
) {
  readBranch(ctx, accountId, projectId, branchId);
  return { password: requireRole(ctx.db, branchId, name).password };
}

export function resetRolePassword(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  name: string,
) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx) => {
    const role = requireRole(tx, branchId, name);
    const next = { ...role, password: ctx.ids.password(), updatedAt: ctx.clock.now() };
    tx.update(roles)
      .set({ password: next.password, updatedAt: next.updatedAt })
      .where(and(eq(roles.branchId, branchId), eq(roles.name, name)))
      .run();
    return { role: toRoleJson(next, { withPassword: true }) };
  });
}

// Databases

export function listDatabases(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  readBranch(ctx, accountId, projectId, branchId);
  const rows = ctx.db
    .select()
    .from(databases)
    .where(eq(databases.branchId, branchId))
    .orderBy(asc(databases.id))
    .all();
  return { databases: rows.map(toDatabaseJson) };
}

export function getDatabase(ctx: Ctx, accountId: string, projectId: string, branchId: string, name: string) {
  readBranch(ctx, accountId, projectId, branchId);
  return { database: toDatabaseJson(requireDatabase(ctx.db, branchId, name)) };
}

export function createDatabase(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  input: { name: string; owner_name: string },
) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx, branch) => ({
    database: toDatabaseJson(
      insertDatabase(ctx, tx, branch, { name: input.name, ownerName: input.owner_name }),
    ),
  }));
}

export function updateDatabase(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  name: string,
  input: { name?: string | undefined; owner_name?: string | undefined },
) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx) => {
    const row = requireDatabase(tx, branchId, name);
    if (input.owner_name !== undefined) requireRole(tx, branchId, input.owner_name);
    const next = {
      ...row,
      name: input.name ?? row.name,
      ownerName: input.owner_name ?? row.ownerName,
      updatedAt: ctx.clock.now(),
    };
    uniqueOrConflict(
      () =>
        tx
          .update(databases)
          .set({ name: next.name, ownerName: next.ownerName, updatedAt: next.updatedAt })
          .where(eq(databases.id, row.id))
          .run(),
      () => `database "${next.name}" already exists on branch ${branchId}`,
    );
    return { database: toDatabaseJson(next) };
  });
}

export function deleteDatabase(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  name: string,
) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx) => {
    const row = requireDatabase(tx, branchId, name);
    tx.delete(databases).where(eq(databases.id, row.id)).run();
    return { database: toDatabaseJson(row) };
  });
}
