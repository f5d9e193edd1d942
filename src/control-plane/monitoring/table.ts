import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "../projects/table.js";

/**
 * The emulator's own records over time, for the console's monitoring charts: per minute, the
 * most open connections of an endpoint (`connections`, subject: the endpoint) and the measured
 * size of a branch's data (`logical_size`, subject: the branch). `peak` is the minute's highest
 * value, `last` the value at its end (what later minutes without a sample carry on with).
 * A compute's state over time needs no row here: compute_activity holds its active intervals.
 */
export const metricSamples = sqliteTable(
  "metric_samples",
  {
    accountId: text("account_id").notNull(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    subjectId: text("subject_id").notNull(),
    metric: text("metric", { enum: ["connections", "logical_size"] }).notNull(),
    minute: integer("minute").notNull(),
    peak: integer("peak").notNull(),
    last: integer("last").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.subjectId, t.metric, t.minute] }),
    // Pruning goes by account and age.
    index("metric_samples_account_idx").on(t.accountId, t.minute),
  ],
);
