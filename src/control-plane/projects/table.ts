import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "../accounts/table.js";

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
  (t) => [index("projects_account_order_idx").on(t.accountId, t.createdAt, t.id)],
);
