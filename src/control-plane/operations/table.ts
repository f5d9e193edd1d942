import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { OPERATION_ACTIONS, UNFINISHED_OPERATION_SQL } from "./rules.js";

/**
 * Operation rows outlive their project briefly (the delete_tenant operation of a deleted
 * project still runs), so they carry no foreign keys; reads always go through a live project.
 */
export const operations = sqliteTable(
  "operations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    projectId: text("project_id").notNull(),
    branchId: text("branch_id"),
    endpointId: text("endpoint_id"),
    action: text("action", { enum: OPERATION_ACTIONS }).notNull(),
    status: text("status", { enum: ["scheduling", "running", "finished", "failed"] }).notNull(),
    failuresCount: integer("failures_count").notNull().default(0),
    error: text("error"),
    /** Microseconds since the epoch; strictly increasing within a project (the paging cursor). */
    createdUs: integer("created_us").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** When a running operation completes (ms); null while scheduling or once terminal. */
    dueAt: integer("due_at"),
    /** When the operation began running (ms). */
    startedAt: integer("started_at"),
    totalDurationMs: integer("total_duration_ms").notNull().default(0),
    /**
     * Set while the worker performs the operation's effect outside a transaction (an asynchronous
     * compute driver): the finalizing write applies only while the claim it made still holds.
     * Null otherwise; claims of a previous process are released at start.
     */
    claim: text("claim"),
  },
  (t) => [
    uniqueIndex("operations_project_created_uq").on(t.projectId, t.createdUs),
    // History by age, for pruning: of every account (real clock), of one account (manual clock).
    index("operations_created_idx").on(t.createdUs),
    index("operations_account_created_idx").on(t.accountId, t.createdUs),
    // One account's unfinished operations (a manual clock's pass runs per account).
    index("operations_account_pending_idx")
      .on(t.accountId, t.status, t.dueAt)
      .where(sql.raw(UNFINISHED_OPERATION_SQL)),
    index("operations_pending_idx").on(t.status, t.dueAt).where(sql.raw(UNFINISHED_OPERATION_SQL)),
    // An endpoint's unfinished operations without walking its whole history (a long-lived
    // sandbox accumulates hundreds of thousands of finished ones). Operations without an
    // endpoint stay out of it; `endpoint_id = ?` in a query implies the NOT NULL.
    index("operations_endpoint_unfinished_idx")
      .on(t.endpointId, t.createdUs)
      .where(sql.raw(`${UNFINISHED_OPERATION_SQL} AND endpoint_id IS NOT NULL`)),
  ],
);
