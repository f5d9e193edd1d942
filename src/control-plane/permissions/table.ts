import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "../projects/table.js";

/**
 * Project sharing: access granted to an email. The account whose user has that email sees the
 * project in GET /projects/shared and acts on it as a collaborator (everything but deleting it).
 */
export const projectPermissions = sqliteTable(
  "project_permissions",
  {
    id: text("id").primaryKey(), // a UUID
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    grantedAt: integer("granted_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [
    index("project_permissions_project_idx").on(t.projectId, t.grantedAt),
    index("project_permissions_email_idx").on(t.email).where(sql`${t.revokedAt} IS NULL`),
  ],
);
