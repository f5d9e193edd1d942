import crypto from "node:crypto";
import Database from "better-sqlite3";

const ACTIONS = ["start_compute", "suspend_compute", "check_availability", "apply_config"] as const;

/**
 * Inserts `count` finished operations for one project straight into the SQLite file (the
 * server must be stopped). They are older than every operation already there, one second
 * apart, so `created_us` stays unique and strictly increasing, as the emulator guarantees.
 * Columns follow the `operations` table of migrations/0000_init.sql.
 */
export function seedOperations(file: string, projectId: string, count: number): { seconds: number } {
  const t0 = performance.now();
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF");
    const project = db.prepare("SELECT id, account_id FROM projects WHERE id = ?").get(projectId) as
      | { id: string; account_id: string }
      | undefined;
    if (!project) throw new Error(`project ${projectId} not in ${file}`);
    const eps = db.prepare("SELECT id, branch_id FROM endpoints WHERE project_id = ?").all(projectId) as {
      id: string;
      branch_id: string;
    }[];
    if (eps.length === 0) throw new Error(`project ${projectId} has no endpoints to attribute operations to`);
    const oldest =
      (db.prepare("SELECT MIN(created_us) AS v FROM operations").get() as { v: number | null }).v ??
      Date.now() * 1000;
    const step = 1_000_000; // one second between operations
    const first = oldest - (count + 1) * step;
    const insert = db.prepare(
      `INSERT INTO operations (id, account_id, project_id, branch_id, endpoint_id, action, status,
         failures_count, error, created_us, updated_at, due_at, started_at, total_duration_ms)
       VALUES (?, ?, ?, ?, ?, ?, 'finished', 0, NULL, ?, ?, NULL, ?, ?)`,
    );
    const batch = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const ep = eps[i % eps.length] as { id: string; branch_id: string };
        const action = ACTIONS[i % ACTIONS.length] as (typeof ACTIONS)[number];
        const createdUs = first + i * step;
        const startedMs = Math.floor(createdUs / 1000);
        const duration = action === "start_compute" ? 1000 : 500;
        insert.run(
          crypto.randomUUID(),
          project.account_id,
          project.id,
          ep.branch_id,
          action === "check_availability" ? null : ep.id,
          action,
          createdUs,
          startedMs + duration,
          startedMs,
          duration,
        );
      }
    });
    const chunk = 100_000;
    for (let from = 0; from < count; from += chunk) batch(from, Math.min(count, from + chunk));
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return { seconds: (performance.now() - t0) / 1000 };
}

/** `created_us` of the project's operations, newest first (for picking deep cursors). */
export function operationTimes(file: string, projectId: string): number[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare("SELECT created_us FROM operations WHERE project_id = ? ORDER BY created_us DESC")
      .pluck()
      .all(projectId) as number[];
  } finally {
    db.close();
  }
}

export function countRows(file: string, sql: string, ...params: unknown[]): number {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(sql)
      .pluck()
      .get(...params) as number;
  } finally {
    db.close();
  }
}

/** The emulator's cursor format: ISO 8601 with six fractional digits (src/lib/clock.ts isoMicros). */
export function cursorOf(us: number): string {
  const base = new Date(Math.floor(us / 1000)).toISOString().slice(0, 19);
  return `${base}.${String(us % 1_000_000).padStart(6, "0")}Z`;
}
