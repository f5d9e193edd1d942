import { sql } from "drizzle-orm";
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { branches } from "./branches.js";
import { projects } from "./projects.js";

export const endpoints = sqliteTable(
  "endpoints",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id, { onDelete: "cascade" }),
    type: text("type", { enum: ["read_write", "read_only"] }).notNull(),
    name: text("name"),
    host: text("host").notNull(),
    proxyHost: text("proxy_host").notNull(),
    regionId: text("region_id").notNull(),
    provisioner: text("provisioner").notNull(),
    creationSource: text("creation_source").notNull(),
    minCu: real("autoscaling_limit_min_cu").notNull(),
    maxCu: real("autoscaling_limit_max_cu").notNull(),
    suspendTimeoutSeconds: integer("suspend_timeout_seconds").notNull(),
    currentState: text("current_state", { enum: ["init", "active", "idle"] }).notNull(),
    pendingState: text("pending_state", { enum: ["init", "active", "idle"] }),
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    poolerEnabled: integer("pooler_enabled", { mode: "boolean" }).notNull(),
    poolerMode: text("pooler_mode").notNull(),
    disabled: integer("disabled", { mode: "boolean" }).notNull(),
    passwordlessAccess: integer("passwordless_access", { mode: "boolean" }).notNull(),
    lastActive: integer("last_active"),
    startedAt: integer("started_at"),
    suspendedAt: integer("suspended_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    // Structural rule 1: at most one read_write endpoint per branch, even under concurrent requests.
    uniqueIndex("endpoints_one_read_write_per_branch").on(t.branchId).where(sql`type = 'read_write'`),
    index("endpoints_project_idx").on(t.projectId, t.createdAt, t.id),
    index("endpoints_branch_idx").on(t.branchId),
    index("endpoints_active_idx").on(t.currentState),
  ],
);
