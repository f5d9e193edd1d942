import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Small persistent settings of the emulator itself, e.g. the manual clock's current time. */
export const emulatorState = sqliteTable("emulator_state", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/** Armed faults: the next `remaining` operations of `action` (optionally scoped) fail on purpose. */
export const faults = sqliteTable(
  "faults",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull(),
    action: text("action").notNull(),
    projectId: text("project_id"),
    endpointId: text("endpoint_id"),
    remaining: integer("remaining").notNull(),
    message: text("message").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  // A completing operation looks for its account's faults of its action, oldest first.
  (t) => [index("faults_account_action_idx").on(t.accountId, t.action, t.id)],
);

/**
 * The advances of each account's manual clock: when (wall time) each began and the time it moved
 * the clock to. Postgres stamps commits with wall time; a time on an account's clock maps to the
 * wall time of the first advance past it (everything committed before that advance happened at
 * or before the time). Kept as long as the longest history retention.
 */
export const clockMoves = sqliteTable(
  "clock_moves",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull(),
    wallMs: integer("wall_ms").notNull(),
    toMs: integer("to_ms").notNull(),
  },
  (t) => [index("clock_moves_account_idx").on(t.accountId, t.toMs)],
);
