import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "../projects/table.js";

/** JWKS URLs a project trusts for JWT authentication (stored and listed; nothing fetches them). */
export const projectJwks = sqliteTable(
  "project_jwks",
  {
    id: text("id").primaryKey(), // a UUID
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    branchId: text("branch_id"),
    jwksUrl: text("jwks_url").notNull(),
    providerName: text("provider_name").notNull(),
    jwtAudience: text("jwt_audience"),
    roleNames: text("role_names", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("project_jwks_project_idx").on(t.projectId, t.createdAt)],
);
