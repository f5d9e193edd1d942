import { and, asc, eq, gt, or, sql } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { contains } from "../../platform/sql.js";
import { statement } from "../../platform/statements.js";
import type { ProjectRow } from "../access.js";
import { QUOTA_SET_SQL } from "./quota.js";
import { projects } from "./table.js";

export function insertProject(tx: Tx, row: ProjectRow): void {
  tx.insert(projects).values(row).run();
}

export function updateProjectRow(tx: Tx, row: ProjectRow): void {
  tx.update(projects).set(row).where(eq(projects.id, row.id)).run();
}

export function setLocked(tx: Tx, projectId: string, locked: boolean): void {
  tx.update(projects).set({ locked }).where(eq(projects.id, projectId)).run();
}

/** Deletes the project; its branches, endpoints, roles and databases go with it (foreign keys cascade). */
export function deleteProjectRow(tx: Tx, projectId: string): void {
  tx.delete(projects).where(eq(projects.id, projectId)).run();
}

/** Deletes every project of the account; returns their ids. */
export function deleteAccountProjects(tx: Tx, accountId: string): string[] {
  return tx
    .delete(projects)
    .where(eq(projects.accountId, accountId))
    .returning({ id: projects.id })
    .all()
    .map((p) => p.id);
}

/** A project list's search (name or id) and its place after `after` in (created_at, id) order. */
export function projectPageFilter(search: string | undefined, after: ProjectRow | undefined) {
  return and(
    search ? or(contains(projects.name, search), contains(projects.id, search)) : undefined,
    after
      ? or(
          gt(projects.createdAt, after.createdAt),
          and(eq(projects.createdAt, after.createdAt), gt(projects.id, after.id)),
        )
      : undefined,
  );
}

/** A page of the account's projects, oldest first, after `after`; one more than `limit` tells whether more remain. */
export function listProjectRows(
  tx: Tx,
  accountId: string,
  opts: { search?: string | undefined; after?: ProjectRow | undefined; limit: number; only?: string | null },
): ProjectRow[] {
  const { search, after, only } = opts;
  return tx
    .select()
    .from(projects)
    .where(
      and(
        eq(projects.accountId, accountId),
        only ? eq(projects.id, only) : undefined,
        projectPageFilter(search, after),
      ),
    )
    .orderBy(asc(projects.createdAt), asc(projects.id))
    .limit(opts.limit + 1)
    .all();
}

/** Stamps the time a compute of the project was last active. */
export function stampComputeActive(tx: Tx, projectId: string, at: number): void {
  statement(tx, "UPDATE projects SET compute_last_active_at = @at WHERE id = @id").run({ at, id: projectId });
}

export function countProjects(tx: Tx): number {
  return tx.select({ n: sql<number>`count(*)` }).from(projects).get()?.n ?? 0;
}

/** Every table that records a project's account, with the column naming the project. */
const ACCOUNT_TABLES = [
  ["projects", "id"],
  ["branches", "project_id"],
  ["endpoints", "project_id"],
  ["roles", "project_id"],
  ["databases", "project_id"],
  ["operations", "project_id"],
  ["faults", "project_id"],
  ["compute_activity", "project_id"],
  ["snapshots", "project_id"],
  ["backup_schedules", "project_id"],
  ["metric_samples", "project_id"],
  ["usage_meter", "project_id"],
  ["snapshot_storage", "project_id"],
] as const;

/** Hands a project, with everything it holds, to another account (a transfer between organizations). */
export function moveProject(tx: Tx, projectId: string, toAccountId: string): void {
  for (const [table, column] of ACCOUNT_TABLES)
    statement(tx, `UPDATE "${table}" SET account_id = @to WHERE ${column} = @projectId`).run({
      to: toAccountId,
      projectId,
    });
}

export function countAccountProjects(tx: Tx, accountId: string): number {
  return (
    statement<{ n: number }>(tx, "SELECT count(*) AS n FROM projects WHERE account_id = @accountId").get({
      accountId,
    })?.n ?? 0
  );
}

/** A project's `settings.quota` as JSON text (null when unset or no such project). */
export function projectQuotaJson(tx: Tx, projectId: string): string | null {
  return (
    statement<{ quota: string | null }>(
      tx,
      "SELECT json_extract(settings, '$.quota') AS quota FROM projects WHERE id = @id",
    ).get({ id: projectId })?.quota ?? null
  );
}

/**
 * Projects with a quota set and a compute heading for active (one account's, or every account's):
 * those whose quota may need their computes suspended. Read through the partial index of projects
 * with a quota, so projects without one cost nothing.
 */
export function quotaProjects(tx: Tx, accountId: string | null): { id: string; quota: string }[] {
  return statement<{ id: string; quota: string }>(
    tx,
    `SELECT p.id AS id, json_extract(p.settings, '$.quota') AS quota
       FROM projects p INDEXED BY projects_quota_idx
      WHERE ${QUOTA_SET_SQL} ${accountId === null ? "" : "AND p.account_id = @accountId"}
        AND EXISTS (SELECT 1 FROM endpoints e
                     WHERE e.project_id = p.id AND coalesce(e.pending_state, e.current_state) = 'active')`,
  ).all({ accountId });
}

/**
 * The active primaries of projects with a written_data_bytes quota: their WAL is measured whether
 * or not clients use them (a subscription writes with none). Through the partial index, as above.
 */
export function writtenQuotaPrimaries(tx: Tx): string[] {
  return statement<{ id: string }>(
    tx,
    `SELECT e.id AS id FROM endpoints e
      WHERE e.type = 'read_write' AND e.current_state = 'active'
        AND e.project_id IN (SELECT p.id FROM projects p INDEXED BY projects_quota_idx
                              WHERE ${QUOTA_SET_SQL}
                                AND json_extract(p.settings, '$.quota.written_data_bytes') > 0)`,
  )
    .all()
    .map((r) => r.id);
}
