import { and, asc, eq, gt, or } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { statement } from "../../platform/statements.js";
import type { ProjectRow } from "../access.js";
import { deletedProjects, projects } from "./table.js";

export type DeletedProjectRow = typeof deletedProjects.$inferSelect;

/**
 * The tables holding a project's objects that a recovery brings back, in an order that satisfies
 * their foreign keys. Not kept: operations (a deleted project's history ends with its
 * delete_tenant), pending transfer requests, armed faults, and the project's API keys (revoked).
 */
const KEPT_TABLES = [
  "branches",
  "roles",
  "databases",
  "catalog_drops",
  "endpoints",
  "project_permissions",
  "project_jwks",
  "project_vpc_endpoints",
  "snapshots",
  "backup_schedules",
] as const;

/** Stores the project's rows for a later recovery; the caller then deletes them from their tables. */
export function stashProject(tx: Tx, project: ProjectRow, deletedAt: number, recoverableUntil: number): void {
  const rows: Record<string, Record<string, unknown>[]> = {};
  for (const table of KEPT_TABLES)
    rows[table] = statement<Record<string, unknown>>(
      tx,
      `SELECT * FROM "${table}" WHERE project_id = @projectId ORDER BY rowid`,
    ).all({ projectId: project.id });
  tx.insert(deletedProjects)
    .values({ id: project.id, accountId: project.accountId, deletedAt, recoverableUntil, project, rows })
    .run();
}

/**
 * Puts a stashed project back: its own row and every kept row, as they were, except that no
 * compute runs (their servers stopped at deletion) and no branch is left being created.
 */
export function unstashProject(tx: Tx, stashed: DeletedProjectRow, now: number): ProjectRow {
  const project = { ...stashed.project, updatedAt: now };
  tx.insert(projects).values(project).run();
  for (const table of KEPT_TABLES) {
    for (const row of stashed.rows[table] ?? []) {
      const columns = Object.keys(row);
      statement(
        tx,
        `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(", ")})
         VALUES (${columns.map((c) => `@${c}`).join(", ")})`,
      ).run(row);
    }
  }
  statement(
    tx,
    `UPDATE endpoints SET current_state = 'idle', pending_state = NULL, open_connections = 0,
       suspended_at = CASE WHEN current_state = 'idle' THEN suspended_at ELSE @now END, updated_at = @now
     WHERE project_id = @projectId`,
  ).run({ projectId: project.id, now });
  statement(
    tx,
    `UPDATE branches SET current_state = 'ready', pending_state = NULL, state_changed_at = @now
     WHERE project_id = @projectId AND current_state <> 'ready'`,
  ).run({ projectId: project.id, now });
  tx.delete(deletedProjects).where(eq(deletedProjects.id, project.id)).run();
  return project;
}

/** A deleted project of the account still within its recovery window at `now`. */
export function findDeletedProject(
  tx: Tx,
  accountId: string,
  projectId: string,
  now: number,
): DeletedProjectRow | undefined {
  const row = tx
    .select()
    .from(deletedProjects)
    .where(and(eq(deletedProjects.id, projectId), eq(deletedProjects.accountId, accountId)))
    .get();
  return row && row.recoverableUntil > now ? row : undefined;
}

/** A page of the account's recoverable projects (deleted, window still open), by deletion time; `limit + 1` rows. */
export function listDeletedProjects(
  tx: Tx,
  accountId: string,
  opts: { now: number; after?: DeletedProjectRow | undefined; limit: number },
): DeletedProjectRow[] {
  const { after } = opts;
  return tx
    .select()
    .from(deletedProjects)
    .where(
      and(
        eq(deletedProjects.accountId, accountId),
        gt(deletedProjects.recoverableUntil, opts.now),
        after
          ? or(
              gt(deletedProjects.deletedAt, after.deletedAt),
              and(eq(deletedProjects.deletedAt, after.deletedAt), gt(deletedProjects.id, after.id)),
            )
          : undefined,
      ),
    )
    .orderBy(asc(deletedProjects.deletedAt), asc(deletedProjects.id))
    .limit(opts.limit + 1)
    .all();
}

/** The project's stash is gone for good (its delete_tenant operation removed the data). */
export function purgeDeletedProject(tx: Tx, projectId: string): void {
  statement(tx, "DELETE FROM deleted_projects WHERE id = @projectId").run({ projectId });
}

/** Every deleted project of the account is dropped (an account reset); returns their ids. */
export function purgeAccountDeletedProjects(tx: Tx, accountId: string): string[] {
  return tx
    .delete(deletedProjects)
    .where(eq(deletedProjects.accountId, accountId))
    .returning({ id: deletedProjects.id })
    .all()
    .map((p) => p.id);
}
