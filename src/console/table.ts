import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "../control-plane/accounts/table.js";

/**
 * One-time sign-in links of the web console (printed at start, or made with a key): only the
 * token's SHA-256 hash is kept, and redeeming it deletes the row.
 */
export const consoleSignInTokens = sqliteTable("console_sign_in_tokens", {
  tokenHash: text("token_hash").primaryKey(),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  expiresAt: integer("expires_at").notNull(),
});

/** Signed-in browsers: the session cookie's hash, its account, and the CSRF token its forms carry. */
export const consoleSessions = sqliteTable(
  "console_sessions",
  {
    idHash: text("id_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("console_sessions_account_idx").on(t.accountId)],
);
