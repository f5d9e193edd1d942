import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * A counter per project, bumped by triggers (migration 0002) on every insert, update or delete
 * of its endpoints, cascades included: a cached endpoint list is current while the counter is
 * unchanged. No foreign key: the row outlives a deleted project harmlessly.
 */
export const endpointVersions = sqliteTable("endpoint_versions", {
  projectId: text("project_id").primaryKey(),
  version: integer("version").notNull(),
});
