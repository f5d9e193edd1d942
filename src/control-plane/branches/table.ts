import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { projects } from "../projects/table.js";

export const branches = sqliteTable(
  "branches",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** No foreign key: children are refused deletion in code, and a project delete removes all at once. */
    parentId: text("parent_id"),
    name: text("name").notNull(),
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    protected: integer("protected", { mode: "boolean" }).notNull().default(false),
    currentState: text("current_state").notNull(),
    pendingState: text("pending_state"),
    stateChangedAt: integer("state_changed_at").notNull(),
    creationSource: text("creation_source").notNull(),
    parentLsn: text("parent_lsn"),
    parentTimestamp: integer("parent_timestamp"),
    logicalSize: integer("logical_size").notNull().default(0),
    expiresAt: integer("expires_at"),
    /**
     * Seconds from when `expires_at` was last set to that time (Neon's ttl_interval_seconds): a
     * reset from the parent sets `expires_at` that far from the reset. Null without an expiry.
     */
    ttlSeconds: integer("ttl_seconds"),
    /** JSON map of string annotations (console/branch annotations). */
    annotations: text("annotations", { mode: "json" }).$type<Record<string, string>>(),
    /**
     * Where a branch's data folder is made from when not its parent's: a branch id (a restore's
     * preserve_under_name keeps the restored branch's state) or a snapshot id (snap-…, a branch
     * restored from a snapshot). Cleared once its folder is made.
     */
    dataSource: text("data_source"),
    /**
     * `parent-data`, or `schema-only`: a root branch made from the schema of `data_source`'s
     * databases without their rows (Neon's init_source).
     */
    initSource: text("init_source").notNull().default("parent-data"),
    /** When a restore (POST …/restore: a reset from its parent, a point in time) last replaced its data. */
    lastResetAt: integer("last_reset_at"),
    /** A restore under way (POST …/restore): the branch whose data replaces this branch's. Cleared once done. */
    restoreSource: text("restore_source"),
    /** A branch restored from a snapshot: `restored`, then `finalized` once it replaced its target. */
    restoreStatus: text("restore_status"),
    /** The snapshot it was restored from. */
    restoredFrom: text("restored_from"),
    /** The branch it is to replace (finalize_restore), then the branch it replaced. */
    restoreTarget: text("restore_target"),
    /** When the last periodic check_availability operation was created for this branch. */
    lastCheckAt: integer("last_check_at"),
    /**
     * What its next periodic check counts from (last_check_at, else created_at) while the branch
     * has an endpoint, else null: indexed, so the worker finds due checks without scanning every
     * branch. Kept by triggers on endpoints (migration 0021) and by the worker when it checks.
     */
    checkBase: integer("check_base"),
    /**
     * The end of the branch's WAL up to which its written data is counted (consumption/meter.ts):
     * set when its data is made or replaced, moved on as its primary is measured.
     */
    meteredLsn: text("metered_lsn"),
    /**
     * The point of its source's history a branch's data is made from, while its create_branch
     * (a create's parent_lsn/parent_timestamp, a restore's source_lsn/source_timestamp) is under
     * way: `lsn:X/X`, or `time:<ms>` in wall time (what Postgres stamps commits with). Cleared with
     * data_source once made.
     */
    historyPoint: text("history_point"),
    /** When the branch's history begins (its creation, its last restore); null: at created_at. */
    historySince: integer("history_since"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("branches_project_name_uq").on(t.projectId, t.name),
    index("branches_project_order_idx").on(t.projectId, t.createdAt, t.id),
    index("branches_parent_idx").on(t.parentId),
    index("branches_check_idx").on(t.checkBase).where(sql`check_base IS NOT NULL`),
    index("branches_account_check_idx").on(t.accountId, t.checkBase).where(sql`check_base IS NOT NULL`),
    // Branches that expire (the worker deletes them when they do): every account's, and one account's.
    index("branches_expires_idx").on(t.expiresAt).where(sql`expires_at IS NOT NULL`),
    index("branches_account_expires_idx").on(t.accountId, t.expiresAt).where(sql`expires_at IS NOT NULL`),
  ],
);
