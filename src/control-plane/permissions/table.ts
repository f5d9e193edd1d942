import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "../projects/table.js";

/**
 * Project sharing: access granted to an email. The account whose user had that email at the time
 * sees the project in GET /projects/shared and acts on it as a collaborator (everything but
 * deleting or transferring it).
 */
export const projectPermissions = sqliteTable(
  "project_permissions",
  {
    id: text("id").primaryKey(), // a UUID
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    /**
     * The account whose user had that email when access was granted: access is bound to it, so an
     * account made later with the same email (emails are not unique here) gains nothing. Null
     * when no account had the email: the grant is listed and gives no access.
     */
    granteeAccountId: text("grantee_account_id"),
    grantedAt: integer("granted_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [
    index("project_permissions_project_idx").on(t.projectId, t.grantedAt),
    index("project_permissions_grantee_idx").on(t.granteeAccountId).where(sql`${t.revokedAt} IS NULL`),
  ],
);
