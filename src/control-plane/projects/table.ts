import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "../accounts/table.js";
import { QUOTA_SET_SQL } from "./quota.js";

export const projects = sqliteTable(
  "projects",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    regionId: text("region_id").notNull(),
    pgVersion: integer("pg_version").notNull(),
    platformId: text("platform_id").notNull(),
    provisioner: text("provisioner").notNull(),
    proxyHost: text("proxy_host").notNull(),
    cpuUsedSec: integer("cpu_used_sec").notNull().default(0),
    branchLogicalSizeLimit: integer("branch_logical_size_limit").notNull(),
    historyRetentionSeconds: integer("history_retention_seconds").notNull(),
    storePasswords: integer("store_passwords", { mode: "boolean" }).notNull().default(true),
    locked: integer("locked", { mode: "boolean" }).notNull().default(false),
    creationSource: text("creation_source").notNull(),
    /** JSON: DefaultEndpointSettings of the public API. */
    defaultEndpointSettings: text("default_endpoint_settings", { mode: "json" })
      .$type<Record<string, unknown>>()
      .notNull(),
    /** JSON: ProjectSettingsData of the public API. */
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    computeLastActiveAt: integer("compute_last_active_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("projects_account_order_idx").on(t.accountId, t.createdAt, t.id),
    // The projects with a quota, which the worker checks on every pass (most have none).
    index("projects_quota_idx").on(t.accountId).where(sql.raw(QUOTA_SET_SQL)),
  ],
);

/**
 * Deleted projects within their recovery window (POST /projects/{p}/recover). A deleted project's
 * rows leave their tables, so no lookup, list or sweep ever sees them; they wait here, with the
 * project's data folders, until recovered or purged by the project's delete_tenant operation.
 */
export const deletedProjects = sqliteTable(
  "deleted_projects",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    deletedAt: integer("deleted_at").notNull(),
    recoverableUntil: integer("recoverable_until").notNull(),
    /** JSON: the project's own row, as the projects table holds it. */
    project: text("project", { mode: "json" }).$type<typeof projects.$inferSelect>().notNull(),
    /** JSON: the rows of the tables that held the project's objects, by table, column names as stored. */
    rows: text("rows", { mode: "json" }).$type<Record<string, Record<string, unknown>[]>>().notNull(),
  },
  (t) => [index("deleted_projects_account_idx").on(t.accountId, t.deletedAt, t.id)],
);
