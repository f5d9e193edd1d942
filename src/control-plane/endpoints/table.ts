import { sql } from "drizzle-orm";
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { branches } from "../branches/table.js";
import { projects } from "../projects/table.js";
import { SUSPEND_DUE_AT_SQL, SUSPEND_ELIGIBLE_SQL } from "./rules.js";

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
    /** Client connections open through the front door now (reset at start): never auto-suspended while any is. */
    openConnections: integer("open_connections").notNull().default(0),
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
    // The next endpoints to auto-suspend, without scanning every active one (the rule: rules.ts).
    index("endpoints_suspend_due_idx")
      .on(sql.raw(`(${SUSPEND_DUE_AT_SQL})`))
      .where(sql.raw(SUSPEND_ELIGIBLE_SQL)),
    index("endpoints_account_suspend_due_idx")
      .on(t.accountId, sql.raw(`(${SUSPEND_DUE_AT_SQL})`))
      .where(sql.raw(SUSPEND_ELIGIBLE_SQL)),
  ],
);

/**
 * Per project, kept by triggers (migrations 0002, 0026) on every insert, update or delete of its
 * endpoints, cascades included: `version`, bumped by each, so a cached endpoint list is current
 * while it is unchanged; `endpoints`, how many it has (what its plan's compute limit is checked
 * against, without counting them). No foreign key: the row outlives a deleted project harmlessly.
 */
export const endpointVersions = sqliteTable("endpoint_versions", {
  projectId: text("project_id").primaryKey(),
  version: integer("version").notNull(),
  endpoints: integer("endpoints").notNull().default(0),
});

/**
 * When each compute ran: one row per active period of an endpoint (opened when it becomes
 * active, closed when it suspends or is deleted), at the size it ran with. Usage figures
 * (active and compute time) are summed from here; rows outlive their endpoint, as Neon's
 * compute time counts deleted computes too.
 */
export const computeActivity = sqliteTable(
  "compute_activity",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull(),
    projectId: text("project_id").notNull(),
    branchId: text("branch_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    cu: real("cu").notNull(),
    startedAt: integer("started_at").notNull(),
    endedAt: integer("ended_at"),
  },
  (t) => [
    index("compute_activity_project_idx").on(t.projectId, t.startedAt),
    index("compute_activity_branch_idx").on(t.branchId),
    index("compute_activity_open_idx").on(t.endpointId).where(sql`${t.endedAt} IS NULL`),
    // A project's periods still open or ended since a moment: what its quota is judged by, on
    // every pass of the worker, without reading its whole history.
    index("compute_activity_project_end_idx").on(t.projectId, t.endedAt),
  ],
);
