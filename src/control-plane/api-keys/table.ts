import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "../accounts/table.js";

/** The secret itself is never stored: only its SHA-256 hash, which is how a key is looked up. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    createdAt: integer("created_at").notNull(),
    createdBy: text("created_by").notNull(),
    lastUsedAt: integer("last_used_at"),
    lastUsedFromAddr: text("last_used_from_addr").notNull().default(""),
    revokedAt: integer("revoked_at"),
    /** personal: `/api_keys`; org: `/organizations/{org_id}/api_keys` (each lists only its own kind). */
    kind: text("kind", { enum: ["personal", "org"] })
      .notNull()
      .default("personal"),
    /** An org key made for one project sees only it; it is revoked when the project is deleted. */
    projectId: text("project_id"),
  },
  (t) => [
    index("api_keys_account_idx").on(t.accountId, t.id),
    index("api_keys_project_idx").on(t.projectId).where(sql`${t.projectId} IS NOT NULL`),
  ],
);
