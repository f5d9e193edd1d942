import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * What a branch's computes moved, per hour of the account's clock: bytes the front door sent to
 * clients (`transfer_bytes`, Neon's egress through its proxy: public network transfer) and bytes of
 * WAL its primary wrote (`written_bytes`). Kept after the branch or project goes, as compute_activity
 * is: a project's figures include its deleted branches and endpoints.
 */
export const usageMeter = sqliteTable(
  "usage_meter",
  {
    accountId: text("account_id").notNull(),
    projectId: text("project_id").notNull(),
    branchId: text("branch_id").notNull(),
    /** The hour's start (clock milliseconds, UTC). */
    hour: integer("hour").notNull(),
    transferBytes: integer("transfer_bytes").notNull().default(0),
    writtenBytes: integer("written_bytes").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.branchId, t.hour] }),
    index("usage_meter_project_idx").on(t.projectId, t.hour),
  ],
);
