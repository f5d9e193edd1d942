import {
  foreignKey,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import { branches } from "../branches/table.js";

export const roles = sqliteTable(
  "roles",
  {
    accountId: text("account_id").notNull(),
    projectId: text("project_id").notNull(),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    password: text("password").notNull(),
    /**
     * Set when the role's password was last set with SQL on its compute (and the role, if it was
     * made there): the SCRAM verifier Postgres keeps, "" for no password; `password` no longer
     * holds. Null: `password` is the role's.
     */
    verifier: text("verifier"),
    protected: integer("protected", { mode: "boolean" }).notNull().default(false),
    noLogin: integer("no_login", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.branchId, t.name] })],
);

export const databases = sqliteTable(
  "databases",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull(),
    projectId: text("project_id").notNull(),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    ownerName: text("owner_name").notNull(),
    /**
     * The id of the database this one is a copy of, through every branch made from a branch (null:
     * its own id). The emulator marks the database in Postgres with it, so a copy's data is found
     * by it whatever either side renamed.
     */
    originId: integer("origin_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("databases_branch_name_uq").on(t.branchId, t.name),
    index("databases_owner_idx").on(t.branchId, t.ownerName),
    // A database's owner must exist on its branch (checked at statement end, so a branch
    // delete that cascades to both tables is allowed).
    foreignKey({ columns: [t.branchId, t.ownerName], foreignColumns: [roles.branchId, roles.name] }),
  ],
);

/**
 * Roles and databases deleted through the API that the branch's data may still hold (its compute
 * was stopped, or the data is a copy made before): the next reconcile drops them. It drops nothing
 * else: a role or database the data holds that the control plane does not (data from before a
 * drop, a change SQL made) is kept, and taken into the API. Cleared once a reconcile succeeds.
 */
export const catalogDrops = sqliteTable(
  "catalog_drops",
  {
    projectId: text("project_id").notNull(),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id, { onDelete: "cascade" }),
    kind: text("kind").$type<"role" | "database">().notNull(),
    name: text("name").notNull(),
    /** A database's origin (databases.origin_id): found by its mark, whatever the data names it. */
    originId: integer("origin_id"),
  },
  (t) => [primaryKey({ columns: [t.branchId, t.kind, t.name] })],
);

/**
 * How to take back the change an apply_config operation carries to the compute, should Postgres
 * refuse it: the operation then fails and the API's view of the branch returns to what it was.
 * One row per unfinished apply_config; removed when the operation completes either way.
 */
export const configUndo = sqliteTable("config_undo", {
  operationId: text("operation_id").primaryKey(),
  branchId: text("branch_id")
    .notNull()
    .references(() => branches.id, { onDelete: "cascade" }),
  undo: text("undo", { mode: "json" }).$type<ConfigUndo>().notNull(),
});

/** A change to a branch's roles or databases, as what takes it back. */
export type ConfigUndo =
  | { kind: "role_created"; name: string }
  | { kind: "role_deleted"; role: typeof roles.$inferSelect }
  | { kind: "password_reset"; name: string; previous: string; previousVerifier?: string | null; next: string }
  | { kind: "database_created"; id: number }
  | { kind: "database_deleted"; database: typeof databases.$inferSelect }
  | { kind: "database_updated"; before: typeof databases.$inferSelect; after: typeof databases.$inferSelect };
