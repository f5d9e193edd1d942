import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * What a branch's computes moved, per hour of the account's clock: bytes the front door sent to
 * clients (`transfer_bytes`, Neon's egress through its proxy: public network transfer) and bytes of
 * WAL its primary wrote (`written_bytes`); and for a root branch, the bytes of WAL its history held
 * at the hour's last measure (`history_bytes`, Neon's instant restore storage; null: not measured
 * that hour, the last measure before holds). Kept after the branch or project goes, as
 * compute_activity is: a project's figures include its deleted branches and endpoints.
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
    historyBytes: integer("history_bytes"),
  },
  (t) => [
    primaryKey({ columns: [t.branchId, t.hour] }),
    index("usage_meter_project_idx").on(t.projectId, t.hour),
    // The history measures alone (an hour in many): those in a window, and each branch's last before it.
    index("usage_meter_history_idx").on(t.projectId, t.hour).where(sql`history_bytes IS NOT NULL`),
    index("usage_meter_branch_history_idx")
      .on(t.projectId, t.branchId, t.hour)
      .where(sql`history_bytes IS NOT NULL`),
  ],
);

/**
 * The bytes each snapshot's data takes, over the time it is kept (Neon's snapshot storage): from
 * when its data was copied until it is deleted or expires (`until`: its expires_at while it is
 * kept, the moment it went after). Kept after the snapshot goes, for the consumption of the past.
 */
export const snapshotStorage = sqliteTable(
  "snapshot_storage",
  {
    snapshotId: text("snapshot_id").primaryKey(),
    accountId: text("account_id").notNull(),
    projectId: text("project_id").notNull(),
    bytes: integer("bytes").notNull(),
    /** Clock milliseconds. */
    since: integer("since").notNull(),
    until: integer("until"),
  },
  (t) => [index("snapshot_storage_project_idx").on(t.projectId, t.since)],
);
