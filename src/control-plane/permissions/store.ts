import { and, asc, eq, isNull, ne, sql } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { statement } from "../../platform/statements.js";
import type { ProjectRow } from "../access.js";
import { projectPageFilter } from "../projects/store.js";
import { projects } from "../projects/table.js";
import { projectPermissions } from "./table.js";

export type PermissionRow = typeof projectPermissions.$inferSelect;

export function insertPermission(tx: Tx, row: PermissionRow): void {
  tx.insert(projectPermissions).values(row).run();
}

export function listActivePermissions(tx: Tx, projectId: string): PermissionRow[] {
  return tx
    .select()
    .from(projectPermissions)
    .where(and(eq(projectPermissions.projectId, projectId), isNull(projectPermissions.revokedAt)))
    .orderBy(asc(projectPermissions.grantedAt), sql`rowid`)
    .all();
}

export function findActivePermission(tx: Tx, projectId: string, email: string): PermissionRow | undefined {
  return tx
    .select()
    .from(projectPermissions)
    .where(
      and(
        eq(projectPermissions.projectId, projectId),
        eq(projectPermissions.email, email),
        isNull(projectPermissions.revokedAt),
      ),
    )
    .get();
}

export function findPermission(tx: Tx, projectId: string, id: string): PermissionRow | undefined {
  return tx
    .select()
    .from(projectPermissions)
    .where(and(eq(projectPermissions.projectId, projectId), eq(projectPermissions.id, id)))
    .get();
}

export function markPermissionRevoked(tx: Tx, id: string, at: number): void {
  tx.update(projectPermissions).set({ revokedAt: at }).where(eq(projectPermissions.id, id)).run();
}

/**
 * The account owning the project when it is shared with the caller's user (and not the caller's
 * own): one indexed lookup, made for every request on a project path.
 */
export function sharedProjectOwner(tx: Tx, callerAccountId: string, projectId: string): string | undefined {
  return statement<{ owner: string }>(
    tx,
    `SELECT p.account_id AS owner
       FROM project_permissions pp
       JOIN projects p ON p.id = pp.project_id
      WHERE pp.project_id = @projectId AND pp.grantee_account_id = @caller AND pp.revoked_at IS NULL
        AND p.account_id <> @caller
      LIMIT 1`,
  ).get({ caller: callerAccountId, projectId })?.owner;
}

/** Projects other accounts share with the caller's user, oldest first, after `after`. */
export function listSharedProjectRows(
  tx: Tx,
  callerAccountId: string,
  opts: { search?: string | undefined; after?: ProjectRow | undefined; limit: number },
): ProjectRow[] {
  const { search, after } = opts;
  return tx
    .select({ project: projects })
    .from(projectPermissions)
    .innerJoin(projects, eq(projects.id, projectPermissions.projectId))
    .where(
      and(
        eq(projectPermissions.granteeAccountId, callerAccountId),
        isNull(projectPermissions.revokedAt),
        ne(projects.accountId, callerAccountId),
        projectPageFilter(search, after),
      ),
    )
    .groupBy(projects.id)
    .orderBy(asc(projects.createdAt), asc(projects.id))
    .limit(opts.limit + 1)
    .all()
    .map((r) => r.project);
}

/** A project changing hands keeps none of its grants. */
export function revokeProjectPermissions(tx: Tx, projectId: string, at: number): void {
  tx.update(projectPermissions)
    .set({ revokedAt: at })
    .where(and(eq(projectPermissions.projectId, projectId), isNull(projectPermissions.revokedAt)))
    .run();
}
