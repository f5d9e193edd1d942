import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { uniqueOrConflict } from "../../platform/sql.js";
import { prepared } from "../../platform/statements.js";
import type { BranchCatalog } from "../snapshots/table.js";
import { type ConfigUndo, catalogDrops, configUndo, databases, roles } from "./table.js";

export type RoleRow = typeof roles.$inferSelect;
export type DatabaseRow = typeof databases.$inferSelect;

export function insertRole(tx: Tx, row: RoleRow): void {
  uniqueOrConflict(
    () => tx.insert(roles).values(row).run(),
    () => `role "${row.name}" already exists on branch ${row.branchId}`,
  );
}

export function findRole(tx: Tx, branchId: string, name: string): RoleRow | undefined {
  return prepared(tx, "roles.byName", () =>
    tx
      .select()
      .from(roles)
      .where(and(eq(roles.branchId, sql.placeholder("branchId")), eq(roles.name, sql.placeholder("name"))))
      .prepare(),
  ).get({ branchId, name });
}

export function listRoleRows(tx: Tx, branchId: string): RoleRow[] {
  return tx
    .select()
    .from(roles)
    .where(eq(roles.branchId, branchId))
    .orderBy(asc(roles.createdAt), sql`rowid`)
    .all();
}

export function setRolePassword(
  tx: Tx,
  branchId: string,
  name: string,
  password: string,
  now: number,
  verifier: string | null = null,
): void {
  tx.update(roles)
    .set({ password, verifier, updatedAt: now })
    .where(and(eq(roles.branchId, branchId), eq(roles.name, name)))
    .run();
}

/** A role as its branch's server holds it: its verifier (see the column) and whether it may log in. */
export function setServerRole(
  tx: Tx,
  branchId: string,
  name: string,
  verifier: string | null,
  noLogin: boolean,
  now: number,
): void {
  tx.update(roles)
    .set({ verifier, noLogin, updatedAt: now })
    .where(and(eq(roles.branchId, branchId), eq(roles.name, name)))
    .run();
}

/** The undo records of the branch's unfinished apply_config operations. */
const undos = (tx: Tx, branchId: string) =>
  tx.select({ undo: configUndo.undo }).from(configUndo).where(eq(configUndo.branchId, branchId)).all();

/** The roles the branch's unfinished apply_config operations make, delete or give a new password. */
export function pendingRoleNames(tx: Tx, branchId: string): Set<string> {
  const names = new Set<string>();
  for (const { undo } of undos(tx, branchId)) {
    if (undo.kind === "role_created" || undo.kind === "password_reset") names.add(undo.name);
    else if (undo.kind === "role_deleted") names.add(undo.role.name);
  }
  return names;
}

/**
 * The databases the branch's unfinished apply_config operations make, delete or change: their
 * rows' ids, their origins, and their names before and after.
 */
export function pendingDatabases(
  tx: Tx,
  branchId: string,
): { ids: Set<number>; origins: Set<number>; names: Set<string> } {
  const ids = new Set<number>();
  const origins = new Set<number>();
  const names = new Set<string>();
  const add = (d: { id: number; originId?: number | null; name: string }) => {
    ids.add(d.id);
    origins.add(originOf({ id: d.id, originId: d.originId ?? null }));
    names.add(d.name);
  };
  const created = new Set<number>();
  for (const { undo } of undos(tx, branchId)) {
    if (undo.kind === "database_created") created.add(undo.id);
    else if (undo.kind === "database_deleted") add(undo.database);
    else if (undo.kind === "database_updated") {
      add(undo.before);
      add(undo.after);
    }
  }
  for (const row of listDatabaseRows(tx, branchId)) if (created.has(row.id)) add(row);
  return { ids, origins, names };
}

export function deleteRoleRow(tx: Tx, branchId: string, name: string): void {
  tx.delete(roles)
    .where(and(eq(roles.branchId, branchId), eq(roles.name, name)))
    .run();
}

/** Copies a branch's roles to another branch (in their order), dated `now`; returns the copies. */
export function copyRoles(tx: Tx, fromBranchId: string, toBranchId: string, now: number): RoleRow[] {
  const copies = tx
    .select()
    .from(roles)
    .where(eq(roles.branchId, fromBranchId))
    .orderBy(asc(roles.createdAt), sql`rowid`)
    .all()
    .map((r) => ({ ...r, branchId: toBranchId, createdAt: now, updatedAt: now }));
  if (copies.length) tx.insert(roles).values(copies).run();
  return copies;
}

/**
 * A database made on the branch (by the API or SQL): its own origin, unless it is a copy of one
 * the branch's data was copied with (`originId`: that one's origin).
 */
export function insertDatabase(
  tx: Tx,
  values: Omit<DatabaseRow, "id" | "originId"> & { originId?: number },
): DatabaseRow {
  return uniqueOrConflict(
    () => tx.insert(databases).values(values).returning().get(),
    () => `database "${values.name}" already exists on branch ${values.branchId}`,
  );
}

export function findDatabase(tx: Tx, branchId: string, name: string): DatabaseRow | undefined {
  return tx
    .select()
    .from(databases)
    .where(and(eq(databases.branchId, branchId), eq(databases.name, name)))
    .get();
}

export function listDatabaseRows(tx: Tx, branchId: string): DatabaseRow[] {
  return tx.select().from(databases).where(eq(databases.branchId, branchId)).orderBy(asc(databases.id)).all();
}

/** A database the role owns on the branch, if any. */
export function findOwnedDatabase(tx: Tx, branchId: string, owner: string): string | undefined {
  return tx
    .select({ name: databases.name })
    .from(databases)
    .where(and(eq(databases.branchId, branchId), eq(databases.ownerName, owner)))
    .get()?.name;
}

export function updateDatabaseRow(tx: Tx, row: DatabaseRow): void {
  uniqueOrConflict(
    () =>
      tx
        .update(databases)
        .set({ name: row.name, ownerName: row.ownerName, updatedAt: row.updatedAt })
        .where(eq(databases.id, row.id))
        .run(),
    () => `database "${row.name}" already exists on branch ${row.branchId}`,
  );
}

export function deleteDatabaseRow(tx: Tx, id: number): void {
  tx.delete(databases).where(eq(databases.id, id)).run();
}

/** Copies a branch's databases to another branch (in their order), dated `now`; returns the copies. */
export function copyDatabases(tx: Tx, fromBranchId: string, toBranchId: string, now: number): DatabaseRow[] {
  const copies = tx
    .select()
    .from(databases)
    .where(eq(databases.branchId, fromBranchId))
    .orderBy(asc(databases.id))
    .all()
    .map(({ id, ...d }) => ({
      ...d,
      originId: d.originId ?? id,
      branchId: toBranchId,
      createdAt: now,
      updatedAt: now,
    }));
  return copies.length ? tx.insert(databases).values(copies).returning().all() : [];
}

/** The id a database is marked with in Postgres: its origin's (see the column). */
export const originOf = (row: { id: number; originId: number | null }) => row.originId ?? row.id;

/** Roles and databases the API deleted that the branch's data may still hold (see the table). */
export interface CatalogDrops {
  roles: string[];
  /** By name, and by origin (its mark in the data) when the deleted row had one. */
  databases: { name: string; origin: number | null }[];
}

/** Records that the API deleted a role or database (with its origin) of the branch, for the next reconcile to drop. */
export function recordDrop(
  tx: Tx,
  branch: { id: string; projectId: string },
  kind: "role" | "database",
  name: string,
  origin: number | null = null,
): void {
  tx.insert(catalogDrops)
    .values({ projectId: branch.projectId, branchId: branch.id, kind, name, originId: origin })
    .onConflictDoUpdate({
      target: [catalogDrops.branchId, catalogDrops.kind, catalogDrops.name],
      set: { originId: origin },
    })
    .run();
}

export function listDrops(tx: Tx, branchId: string): CatalogDrops {
  const drops: CatalogDrops = { roles: [], databases: [] };
  for (const d of tx.select().from(catalogDrops).where(eq(catalogDrops.branchId, branchId)).all())
    if (d.kind === "role") drops.roles.push(d.name);
    else drops.databases.push({ name: d.name, origin: d.originId });
  return drops;
}

/**
 * A reconcile applied these drops (or found them moot): they go. A database's goes only while it
 * still names the same origin: deleted again meanwhile (made anew through the API, then deleted),
 * it waits for the next reconcile.
 */
export function clearDrops(tx: Tx, branchId: string, drops: CatalogDrops): void {
  const roleDrops = and(eq(catalogDrops.branchId, branchId), eq(catalogDrops.kind, "role"));
  if (drops.roles.length)
    tx.delete(catalogDrops)
      .where(and(roleDrops, inArray(catalogDrops.name, drops.roles)))
      .run();
  for (const d of drops.databases)
    tx.delete(catalogDrops)
      .where(
        and(
          eq(catalogDrops.branchId, branchId),
          eq(catalogDrops.kind, "database"),
          eq(catalogDrops.name, d.name),
          d.origin === null ? isNull(catalogDrops.originId) : eq(catalogDrops.originId, d.origin),
        ),
      )
      .run();
}

/** A copy of a branch's data may hold what the API deleted from it: the copy's reconcile drops that too. */
export function copyDrops(tx: Tx, fromBranchId: string, to: { id: string; projectId: string }): void {
  const drops = listDrops(tx, fromBranchId);
  for (const name of drops.roles) recordDrop(tx, to, "role", name);
  for (const d of drops.databases) recordDrop(tx, to, "database", d.name, d.origin);
}

export function recordUndo(tx: Tx, operationId: string, branchId: string, undo: ConfigUndo): void {
  tx.insert(configUndo).values({ operationId, branchId, undo }).run();
}

/** Removes and returns the undo of an operation (none for most operations). */
export function takeUndo(tx: Tx, operationId: string): { branchId: string; undo: ConfigUndo } | undefined {
  return tx
    .delete(configUndo)
    .where(eq(configUndo.operationId, operationId))
    .returning({ branchId: configUndo.branchId, undo: configUndo.undo })
    .get();
}

/**
 * Takes a refused change back, unless the branch moved on since (a later change to the same role
 * or database stays): a created role or database goes, a deleted one returns, a reset password and
 * a renamed or re-owned database return to what they were.
 */
export function applyUndo(tx: Tx, branchId: string, undo: ConfigUndo, now: number): void {
  switch (undo.kind) {
    case "role_created":
      if (findOwnedDatabase(tx, branchId, undo.name) === undefined) deleteRoleRow(tx, branchId, undo.name);
      return;
    case "role_deleted":
      if (!findRole(tx, branchId, undo.role.name)) tx.insert(roles).values(undo.role).run();
      return;
    case "password_reset":
      if (findRole(tx, branchId, undo.name)?.password === undo.next)
        setRolePassword(tx, branchId, undo.name, undo.previous, now, undo.previousVerifier ?? null);
      return;
    case "database_created":
      deleteDatabaseRow(tx, undo.id);
      return;
    case "database_deleted":
      if (!findDatabase(tx, branchId, undo.database.name) && findRole(tx, branchId, undo.database.ownerName))
        tx.insert(databases).values(undo.database).run();
      return;
    case "database_updated": {
      const current = tx.select().from(databases).where(eq(databases.id, undo.before.id)).get();
      if (
        current?.name === undo.after.name &&
        current.ownerName === undo.after.ownerName &&
        !(undo.before.name !== undo.after.name && findDatabase(tx, branchId, undo.before.name)) &&
        findRole(tx, branchId, undo.before.ownerName)
      )
        updateDatabaseRow(tx, { ...undo.before, updatedAt: now });
      return;
    }
  }
}

/** A branch's roles and databases become copies of another branch's (a restore), dated `now`. */
export function replaceRolesAndDatabases(
  tx: Tx,
  fromBranchId: string,
  to: { id: string; projectId: string },
  now: number,
): void {
  tx.delete(databases).where(eq(databases.branchId, to.id)).run();
  tx.delete(roles).where(eq(roles.branchId, to.id)).run();
  tx.delete(catalogDrops).where(eq(catalogDrops.branchId, to.id)).run();
  copyRoles(tx, fromBranchId, to.id, now);
  copyDatabases(tx, fromBranchId, to.id, now);
  copyDrops(tx, fromBranchId, to);
}

/** A branch's roles and databases, to be given to another branch later (a snapshot keeps them). */
export function catalogOf(tx: Tx, branchId: string): BranchCatalog {
  return {
    roles: tx
      .select()
      .from(roles)
      .where(eq(roles.branchId, branchId))
      .all()
      .map(({ branchId: _b, ...r }) => r),
    databases: tx
      .select()
      .from(databases)
      .where(eq(databases.branchId, branchId))
      .all()
      .map(({ id, branchId: _b, ...d }) => ({ ...d, originId: d.originId ?? id })),
    drops: listDrops(tx, branchId),
  };
}

/** Gives a branch the roles and databases of a catalog (a branch restored from a snapshot), dated `now`. */
export function insertCatalog(
  tx: Tx,
  branch: { id: string; projectId: string },
  catalog: BranchCatalog,
  now: number,
): void {
  const branchId = branch.id;
  if (catalog.roles.length)
    tx.insert(roles)
      .values(catalog.roles.map((r) => ({ ...r, branchId, createdAt: now, updatedAt: now })))
      .run();
  if (catalog.databases.length)
    tx.insert(databases)
      .values(catalog.databases.map((d) => ({ ...d, branchId, createdAt: now, updatedAt: now })))
      .run();
  for (const name of catalog.drops?.roles ?? []) recordDrop(tx, branch, "role", name);
  for (const d of catalog.drops?.databases ?? []) recordDrop(tx, branch, "database", d.name, d.origin);
}
