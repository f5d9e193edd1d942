/**
 * Project sharing. Access granted to an email lets the account whose user has that email see the
 * project in GET /projects/shared and act on it as a collaborator: everything its owner can do
 * but delete it (Neon's "Manage project access"). Requests on a shared project run as its owner
 * (http/shared-projects.ts), so every rule and lookup below the route is the owner's.
 */
import type { Ctx } from "../../context.js";
import { badRequest, notFound } from "../../errors.js";
import { cachedRead } from "../../platform/read-cache.js";
import { findProject, type ProjectRow, requireProject, requireWritableProject } from "../access.js";
import { getAccount } from "../accounts/store.js";
import type { Principal } from "../api-keys/service.js";
import { findAccountByEmail } from "../organizations/store.js";
import { projectListPage } from "../projects/service.js";
import { toPermissionJson } from "./render.js";
import {
  findActivePermission,
  findPermission,
  insertPermission,
  listActivePermissions,
  listSharedProjectRows,
  markPermissionRevoked,
  sharedProjectOwner,
} from "./store.js";

export function listProjectPermissions(ctx: Ctx, accountId: string, projectId: string) {
  requireProject(ctx.db, accountId, projectId);
  return { project_permissions: listActivePermissions(ctx.db, projectId).map(toPermissionJson) };
}

/** Granting to an email that already has access answers the existing grant. */
export function grantProjectPermission(ctx: Ctx, accountId: string, projectId: string, email: string) {
  return ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    if (getAccount(tx, project.accountId).email === email)
      throw badRequest(`${email} owns project ${projectId} and has access to it already`);
    const existing = findActivePermission(tx, projectId, email);
    if (existing) return toPermissionJson(existing);
    const grantee = findAccountByEmail(tx, email)?.id ?? null;
    const row = {
      id: ctx.ids.uuid(),
      projectId,
      email,
      granteeAccountId: grantee,
      grantedAt: ctx.clock.now(accountId),
      revokedAt: null,
    };
    insertPermission(tx, row);
    return toPermissionJson(row);
  });
}

/** Revoking takes effect at once; revoking again answers the revoked grant. */
export function revokeProjectPermission(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  permissionId: string,
) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const row = findPermission(tx, projectId, permissionId);
    if (!row) throw notFound(`permission ${permissionId} not found in project ${projectId}`);
    if (row.revokedAt !== null) return toPermissionJson(row);
    const at = ctx.clock.now(accountId);
    markPermissionRevoked(tx, permissionId, at);
    return toPermissionJson({ ...row, revokedAt: at });
  });
}

/**
 * The owner's account when the project is shared with the caller; undefined otherwise. Asked on
 * every request on a project path, so kept while the database is unchanged (cachedRead; `request`
 * is an object unique to the request).
 */
export function sharedOwner(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  request: object,
): string | undefined {
  return (
    cachedRead(
      ctx.db,
      `shared:${accountId}:${projectId}`,
      () => sharedProjectOwner(ctx.db, accountId, projectId) ?? null,
      request,
    ) ?? undefined
  );
}

/** GET /projects/shared: projects other accounts share with the caller's user, paged as GET /projects. */
export function listSharedProjects(
  ctx: Ctx,
  principal: Principal,
  query: { limit?: number | undefined; cursor?: string | undefined; search?: string | undefined },
) {
  if (principal.projectId) return { projects: [] }; // a project-scoped key sees its own project only
  const limit = query.limit ?? 10;
  let after: ProjectRow | undefined;
  if (query.cursor !== undefined) {
    const owner = sharedProjectOwner(ctx.db, principal.accountId, query.cursor);
    after = owner === undefined ? undefined : findProject(ctx.db, owner, query.cursor);
    if (!after)
      throw badRequest(`cursor "${query.cursor}" is not a project shared with you (use pagination.cursor)`);
  }
  const rows = listSharedProjectRows(ctx.db, principal.accountId, { search: query.search, after, limit });
  return projectListPage(
    ctx,
    rows,
    limit,
    (p) => getAccount(ctx.db, p.accountId),
    ctx.clock.now(principal.accountId),
  );
}
