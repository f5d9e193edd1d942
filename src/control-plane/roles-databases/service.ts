import type { Ctx } from "../../context.js";
import { conflict, notFound, preconditionFailed } from "../../errors.js";
import type { Tx } from "../../platform/db.js";
import { type Outcome, operationsStarted } from "../../platform/events.js";
import { parseVerifier, verifies } from "../../platform/scram-verifier.js";
import {
  type BranchRow,
  branchBeingMade,
  findBranchById,
  readBranch,
  requireBranch,
  requireProject,
  requireSettledBranch,
  requireWritableProject,
} from "../access.js";
import { toOperationJson } from "../operations/render.js";
import { startOperation } from "../operations/service.js";
import { DEFAULT_DATABASE_NAME, DEFAULT_ROLE_NAME } from "../projects/rules.js";
import { toDatabaseJson, toRoleJson } from "./render.js";
import type { DatabaseCreateInput, DatabaseUpdateInput, RoleCreateInput } from "./schema.js";
import {
  type CatalogDrops,
  clearDrops,
  copyDrops,
  type DatabaseRow,
  deleteDatabaseRow,
  deleteRoleRow,
  findDatabase,
  findOwnedDatabase,
  findRole,
  insertDatabase,
  insertRole,
  listDatabaseRows,
  listDrops,
  listRoleRows,
  originOf,
  pendingDatabases,
  pendingRoleNames,
  type RoleRow,
  recordDrop,
  recordUndo,
  setRolePassword,
  setServerRole,
  updateDatabaseRow,
} from "./store.js";
import type { ConfigUndo } from "./table.js";

/** A role as a branch's running primary holds it (pg_authid). */
export interface ServerRole {
  name: string;
  /** rolpassword: a SCRAM verifier, or null without a password. */
  verifier: string | null;
  canLogin: boolean;
}

/** A database as a branch's running primary holds it (pg_database). */
export interface ServerDatabase {
  name: string;
  owner: string;
  /** The origin id the emulator marked it with (databases.origin_id), if it did. */
  id: number | undefined;
}

/** What the control plane took from a server: roles it added, and databases to mark with their origin id. */
export interface CatalogTaken {
  roles: string[];
  databases: { name: string; id: number }[];
}

/**
 * Brings the control plane's roles and databases of a branch to what its running primary holds,
 * as Neon's computes send the roles and databases SQL makes, changes and drops to the control
 * plane: a role made with SQL is added (its password known only by its verifier), a password set
 * with SQL replaces the control plane's, a database made with SQL is added, one renamed or given
 * to another owner is changed (keeping its id), and what SQL dropped goes. Roles and databases an
 * unfinished apply_config changes are the API's (not yet on the server), and nothing changes while
 * the branch's data is being made or replaced. (A copy of its data made meanwhile for another
 * branch may hold what this takes and the copy's rows lack: that branch's compute keeps it and
 * takes it in turn, since a compute drops only what the API deleted.)
 */
export function syncServerCatalog(
  ctx: Ctx,
  branchId: string,
  server: { roles: ServerRole[]; databases: ServerDatabase[] },
): CatalogTaken {
  // `.` and `..` (made with SQL) no API path can name: left to SQL, as the API refuses to make them.
  const addressable = ({ name }: { name: string }) => name !== "." && name !== "..";
  server = { roles: server.roles.filter(addressable), databases: server.databases.filter(addressable) };
  return ctx.db.transaction((tx) => {
    const taken: CatalogTaken = { roles: [], databases: [] };
    const branch = findBranchById(tx, branchId);
    if (!branch || branchBeingMade(tx, branchId)) return taken;
    const now = ctx.clock.now(branch.accountId);
    const pending = pendingRoleNames(tx, branchId);
    const dropped = new Set(listDrops(tx, branchId).roles);
    const known = new Map(
      listRoleRows(tx, branchId)
        .filter((r) => !pending.has(r.name))
        .map((r) => [r.name, r]),
    );
    for (const role of server.roles) {
      if (pending.has(role.name)) continue;
      const row = known.get(role.name);
      known.delete(role.name);
      const verifier = role.verifier ?? "";
      if (!row) {
        // One the API deleted (dropped at the next reconcile) is not taken back.
        if (dropped.has(role.name)) continue;
        insertRole(tx, {
          accountId: branch.accountId,
          projectId: branch.projectId,
          branchId,
          name: role.name,
          password: "",
          verifier,
          protected: false,
          noLogin: !role.canLogin,
          createdAt: now,
          updatedAt: now,
        });
        taken.roles.push(role.name);
        continue;
      }
      const parsed = parseVerifier(role.verifier);
      const same =
        row.verifier === null
          ? parsed !== undefined && verifies(parsed, row.password)
          : row.verifier === verifier;
      if (same && row.noLogin === !role.canLogin) continue;
      setServerRole(tx, branchId, role.name, same ? row.verifier : verifier, !role.canLogin, now);
    }
    taken.databases = syncDatabases(tx, branch, server.databases, now);
    // Roles dropped with SQL go once the databases they owned have.
    for (const row of known.values())
      if (findOwnedDatabase(tx, branchId, row.name) === undefined) deleteRoleRow(tx, branchId, row.name);
    return taken;
  });
}

/** The database half of syncServerCatalog; returns the databases to mark with their origin. */
function syncDatabases(
  tx: Tx,
  branch: BranchRow,
  server: ServerDatabase[],
  now: number,
): CatalogTaken["databases"] {
  const pending = pendingDatabases(tx, branch.id);
  const drops = listDrops(tx, branch.id).databases;
  const dropped = (db: ServerDatabase) =>
    drops.some((d) => d.name === db.name || (db.id !== undefined && d.origin === db.id));
  const rows = listDatabaseRows(tx, branch.id).filter((r) => !pending.ids.has(r.id));
  const byOrigin = new Map(rows.map((r) => [originOf(r), r]));
  // The roles as the half before left them (one read, not one per database and check).
  const roleNames = new Set(listRoleRows(tx, branch.id).map((r) => r.name));
  const isRole = (name: string) => roleNames.has(name);
  const mark: CatalogTaken["databases"] = [];
  const matched = new Map<number, { row: DatabaseRow; db: ServerDatabase }>();
  const unmatched: ServerDatabase[] = [];
  for (const db of server) {
    const row = db.id === undefined ? undefined : byOrigin.get(db.id);
    // What an unfinished API change touches is the API's: its row stays as it is.
    if (pending.names.has(db.name) || (db.id !== undefined && pending.origins.has(db.id))) {
      if (row) matched.set(row.id, { row, db: { ...db, name: row.name, owner: row.ownerName } });
    } else if (row) matched.set(row.id, { row, db });
    else unmatched.push(db);
  }
  // Not marked as one of this branch's (made with SQL, or data from before a change): a row of
  // its name not found otherwise is it; else it is new to the control plane.
  const free = new Map(rows.filter((r) => !matched.has(r.id)).map((r) => [r.name, r]));
  const added: ServerDatabase[] = [];
  for (const db of unmatched) {
    const row = free.get(db.name);
    if (row) {
      free.delete(db.name);
      matched.set(row.id, { row, db });
      mark.push({ name: db.name, id: originOf(row) });
    } else if (!dropped(db) && isRole(db.owner)) added.push(db);
    // Owned by a role the control plane does not hold (its own administrator): left alone; one
    // the API deleted (dropped at the next reconcile): not taken back.
  }
  for (const row of free.values()) deleteDatabaseRow(tx, row.id);
  const changed = [...matched.values()]
    .filter(({ row, db }) => row.name !== db.name || (row.ownerName !== db.owner && isRole(db.owner)))
    .map(({ row, db }) => ({
      ...row,
      name: db.name,
      ownerName: isRole(db.owner) ? db.owner : row.ownerName,
      updatedAt: now,
    }));
  // Renames may swap names: each renamed row steps aside first.
  for (const row of changed) updateDatabaseRow(tx, { ...row, name: `${row.name}\u0000${row.id}` });
  for (const row of changed) updateDatabaseRow(tx, row);
  for (const db of added) {
    const row = insertDatabase(tx, {
      accountId: branch.accountId,
      projectId: branch.projectId,
      branchId: branch.id,
      name: db.name,
      ownerName: db.owner,
      createdAt: now,
      updatedAt: now,
    });
    mark.push({ name: db.name, id: originOf(row) });
  }
  return mark;
}

/**
 * A branch whose roles and databases are not copies of what its data starts from (a new project
 * with other names, a seeded branch): what the data brings beyond them goes at its first
 * reconcile. A root's data starts from the template (the default role and database), a child's
 * from its parent's (its roles, databases and pending drops).
 */
export function dropWhatDataBrings(tx: Tx, branch: BranchRow): void {
  const roles = new Set(listRoleRows(tx, branch.id).map((r) => r.name));
  const databases = new Set(listDatabaseRows(tx, branch.id).map((d) => d.name));
  if (branch.parentId === null) {
    if (!roles.has(DEFAULT_ROLE_NAME)) recordDrop(tx, branch, "role", DEFAULT_ROLE_NAME);
    if (!databases.has(DEFAULT_DATABASE_NAME)) recordDrop(tx, branch, "database", DEFAULT_DATABASE_NAME);
    return;
  }
  copyDrops(tx, branch.parentId, branch);
  for (const r of listRoleRows(tx, branch.parentId))
    if (!roles.has(r.name)) recordDrop(tx, branch, "role", r.name);
  for (const d of listDatabaseRows(tx, branch.parentId))
    if (!databases.has(d.name)) recordDrop(tx, branch, "database", d.name, originOf(d));
}

/** A reconcile on the branch's compute applied these drops (or found them moot). */
export function dropsApplied(ctx: Ctx, branchId: string, drops: CatalogDrops): void {
  ctx.db.transaction((tx) => clearDrops(tx, branchId, drops));
}

/** The copied roles of a branch made from a protected one get passwords of their own, as on Neon (a role without one stays so). */
export function renewPasswords(ctx: Ctx, tx: Tx, copied: RoleRow[], now: number): RoleRow[] {
  return copied.map((role) => {
    if (role.verifier === "") return role;
    const next = { ...role, password: ctx.ids.password(), verifier: null, updatedAt: now };
    setRolePassword(tx, role.branchId, role.name, next.password, now);
    return next;
  });
}

function requireRole(tx: Tx, branchId: string, name: string): RoleRow {
  const row = findRole(tx, branchId, name);
  if (!row) throw notFound(`role "${name}" not found on branch ${branchId}`);
  return row;
}

export function requireDatabase(tx: Tx, branchId: string, name: string): DatabaseRow {
  const row = findDatabase(tx, branchId, name);
  if (!row) throw notFound(`database "${name}" not found on branch ${branchId}`);
  return row;
}

/** Adds a role inside the caller's transaction; its password is generated unless given. */
export function addRole(
  ctx: Ctx,
  tx: Tx,
  branch: BranchRow,
  input: { name: string; noLogin?: boolean; password?: string | undefined },
): RoleRow {
  const now = ctx.clock.now(branch.accountId);
  const row: RoleRow = {
    accountId: branch.accountId,
    projectId: branch.projectId,
    branchId: branch.id,
    name: input.name,
    password: input.password ?? ctx.ids.password(),
    verifier: null,
    protected: false,
    noLogin: input.noLogin ?? false,
    createdAt: now,
    updatedAt: now,
  };
  insertRole(tx, row);
  return row;
}

/**
 * Adds a database inside the caller's transaction; its owner must exist on the branch. A seeded
 * branch's database its data brings (its parent's of that name) keeps that one's origin.
 */
export function addDatabase(
  ctx: Ctx,
  tx: Tx,
  branch: BranchRow,
  input: { name: string; ownerName: string; originId?: number },
): DatabaseRow {
  requireRole(tx, branch.id, input.ownerName);
  const now = ctx.clock.now(branch.accountId);
  return insertDatabase(tx, {
    accountId: branch.accountId,
    projectId: branch.projectId,
    branchId: branch.id,
    name: input.name,
    ownerName: input.ownerName,
    createdAt: now,
    updatedAt: now,
    ...(input.originId === undefined ? {} : { originId: input.originId }),
  });
}

/**
 * A change to roles or databases of a branch, with its apply_config operation, in one transaction.
 * The change says how to take it back: if the compute refuses it, the operation fails and the
 * API's view returns to what it was (worker/finish-operations.ts).
 */
function withApplyConfig<T extends object>(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  change: (tx: Tx, branch: BranchRow) => { body: T; undo: ConfigUndo },
) {
  const { body, op } = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const branch = requireSettledBranch(tx, accountId, projectId, branchId);
    const result = change(tx, branch);
    const op = startOperation(ctx, tx, { accountId, projectId, branchId, action: "apply_config" });
    recordUndo(tx, op.id, branchId, result.undo);
    return { body: { ...result.body, operations: [toOperationJson(op)] }, op };
  });
  return { body, events: operationsStarted([op]) } satisfies Outcome<typeof body>;
}

// Roles

export function listRoles(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  readBranch(ctx.db, accountId, projectId, branchId);
  return { roles: listRoleRows(ctx.db, branchId).map((r) => toRoleJson(r)) };
}

export function getRole(ctx: Ctx, accountId: string, projectId: string, branchId: string, name: string) {
  readBranch(ctx.db, accountId, projectId, branchId);
  return { role: toRoleJson(requireRole(ctx.db, branchId, name)) };
}

export function createRole(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  input: RoleCreateInput,
) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx, branch) => {
    const role = addRole(ctx, tx, branch, { name: input.name, noLogin: input.no_login ?? false });
    return {
      body: { role: toRoleJson(role, { withPassword: true }) },
      undo: { kind: "role_created", name: role.name },
    };
  });
}

export function deleteRole(ctx: Ctx, accountId: string, projectId: string, branchId: string, name: string) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx) => {
    const role = requireRole(tx, branchId, name);
    const owned = findOwnedDatabase(tx, branchId, name);
    if (owned !== undefined)
      throw conflict(
        `role "${name}" owns database "${owned}"; delete the database or change its owner first`,
      );
    deleteRoleRow(tx, branchId, name);
    recordDrop(tx, { id: branchId, projectId }, "role", name);
    return { body: { role: toRoleJson(role) }, undo: { kind: "role_deleted", role } };
  });
}

export function revealRolePassword(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  name: string,
) {
  const project = requireProject(ctx.db, accountId, projectId);
  requireBranch(ctx.db, accountId, projectId, branchId);
  const role = requireRole(ctx.db, branchId, name);
  // The public API's answer for a project made with store_passwords: false.
  if (!project.storePasswords)
    throw preconditionFailed(
      `project ${projectId} does not store role passwords (store_passwords: false); reset the password to get a new one`,
    );
  if (role.verifier !== null)
    throw preconditionFailed(
      role.verifier === ""
        ? `role ${name} has no password (made or changed with SQL); reset the password to give it one`
        : `the password of role ${name} was set with SQL, and only its hash is kept; reset the password to get a new one`,
    );
  return { password: role.password };
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
    const next = {
      ...role,
      password: ctx.ids.password(),
      verifier: null,
      updatedAt: ctx.clock.now(accountId),
    };
    setRolePassword(tx, branchId, name, next.password, next.updatedAt);
    return {
      body: { role: toRoleJson(next, { withPassword: true }) },
      undo: {
        kind: "password_reset",
        name,
        previous: role.password,
        previousVerifier: role.verifier,
        next: next.password,
      },
    };
  });
}

// Databases

export function listDatabases(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  readBranch(ctx.db, accountId, projectId, branchId);
  return { databases: listDatabaseRows(ctx.db, branchId).map(toDatabaseJson) };
}

export function getDatabase(ctx: Ctx, accountId: string, projectId: string, branchId: string, name: string) {
  readBranch(ctx.db, accountId, projectId, branchId);
  return { database: toDatabaseJson(requireDatabase(ctx.db, branchId, name)) };
}

export function createDatabase(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  input: DatabaseCreateInput,
) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx, branch) => {
    const database = addDatabase(ctx, tx, branch, { name: input.name, ownerName: input.owner_name });
    return {
      body: { database: toDatabaseJson(database) },
      undo: { kind: "database_created", id: database.id },
    };
  });
}

export function updateDatabase(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  name: string,
  input: DatabaseUpdateInput,
) {
  return withApplyConfig(ctx, accountId, projectId, branchId, (tx) => {
    const row = requireDatabase(tx, branchId, name);
    if (input.owner_name !== undefined) requireRole(tx, branchId, input.owner_name);
    const next = {
      ...row,
      name: input.name ?? row.name,
      ownerName: input.owner_name ?? row.ownerName,
      updatedAt: ctx.clock.now(accountId),
    };
    updateDatabaseRow(tx, next);
    return {
      body: { database: toDatabaseJson(next) },
      undo: { kind: "database_updated", before: row, after: next },
    };
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
    deleteDatabaseRow(tx, row.id);
    recordDrop(tx, { id: branchId, projectId }, "database", row.name, originOf(row));
    return { body: { database: toDatabaseJson(row) }, undo: { kind: "database_deleted", database: row } };
  });
}
