import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { branches } from "../branches/table.js";
import { projects } from "../projects/table.js";
import type { databases, roles } from "../roles-databases/table.js";

/** A branch's roles and databases as stored (without the rows' branch and database ids). */
export interface BranchCatalog {
  roles: Omit<typeof roles.$inferSelect, "branchId">[];
  databases: Omit<typeof databases.$inferSelect, "id" | "branchId">[];
  /** What the API deleted that the data may still hold (absent in snapshots taken before it was kept). */
  drops?: { roles: string[]; databases: { name: string; origin: number | null }[] };
}

/**
 * Snapshots (the public API's Snapshot): a branch's data frozen when it was taken. With real
 * computes the data is a copy of the branch's folder under the project's folder
 * (`snapshots/<id>`); the roles and databases it held are kept here, so a branch restored from it
 * gets both.
 */
export const snapshots = sqliteTable(
  "snapshots",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    sourceBranchId: text("source_branch_id").notNull(),
    name: text("name").notNull(),
    lsn: text("lsn"),
    /** The moment the data is from. */
    takenAt: integer("taken_at").notNull(),
    expiresAt: integer("expires_at"),
    manual: integer("manual", { mode: "boolean" }).notNull().default(true),
    fullSize: integer("full_size"),
    /** JSON: the source branch's roles and databases when it was taken. */
    catalog: text("catalog", { mode: "json" }).$type<BranchCatalog>().notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("snapshots_project_idx").on(t.projectId, t.createdAt, t.id)],
);

/** A branch's backup schedule (PUT …/backup_schedule): when snapshots are taken, and kept how long. */
export const backupSchedules = sqliteTable("backup_schedules", {
  branchId: text("branch_id")
    .primaryKey()
    .references(() => branches.id, { onDelete: "cascade" }),
  accountId: text("account_id").notNull(),
  projectId: text("project_id")
    .notNull()
    .references(() => projects.id, { onDelete: "cascade" }),
  /** JSON: BackupScheduleItem[] of the public API. */
  schedule: text("schedule", { mode: "json" }).$type<Record<string, unknown>[]>().notNull(),
  updatedAt: integer("updated_at").notNull(),
});
