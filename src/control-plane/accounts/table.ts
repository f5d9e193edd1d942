import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Every resource row belongs to an account; keys authenticate exactly one account. */
export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(), // a UUID: also the user id shown as `created_by` / `owner_id`
  orgId: text("org_id").notNull().unique(),
  name: text("name").notNull(),
  email: text("email").notNull(),
  plan: text("plan", { enum: ["paid", "free"] }).notNull(),
  isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
  createdAt: integer("created_at").notNull(),
  /** The organization's monthly spending limit (alert-only on Neon); null when none is set. */
  spendingLimitCents: integer("spending_limit_cents"),
});
