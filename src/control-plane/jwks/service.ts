/**
 * JWKS URLs for JWT authentication (Neon's RLS/Data API): stored per project, optionally per
 * branch, listed and removed. The emulator fetches nothing and creates no roles for them.
 */
import type { Ctx } from "../../context.js";
import { conflict, notFound } from "../../errors.js";
import { requireBranch, requireProject, requireWritableProject } from "../access.js";
import { toJwksJson } from "./render.js";
import type { AddJwksInput } from "./schema.js";
import { countJwks, deleteJwks, findJwks, insertJwks, listJwks } from "./store.js";

/** Neon's default roles for a JWKS (`authenticator`, `authenticated`, `anonymous`). */
const DEFAULT_ROLES = ["authenticator", "authenticated", "anonymous"];
/** How many JWKS URLs one project may hold. */
export const MAX_JWKS_PER_PROJECT = 10;

export function listProjectJwks(ctx: Ctx, accountId: string, projectId: string) {
  requireProject(ctx.db, accountId, projectId);
  return { jwks: listJwks(ctx.db, projectId).map(toJwksJson) };
}

export function addProjectJwks(ctx: Ctx, accountId: string, projectId: string, input: AddJwksInput) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    if (input.branch_id !== undefined) requireBranch(tx, accountId, projectId, input.branch_id);
    if (countJwks(tx, projectId) >= MAX_JWKS_PER_PROJECT)
      throw conflict(`project ${projectId} already has ${MAX_JWKS_PER_PROJECT} JWKS URLs; delete one first`);
    const now = ctx.clock.now(accountId);
    const row = {
      id: ctx.ids.uuid(),
      projectId,
      branchId: input.branch_id ?? null,
      jwksUrl: input.jwks_url,
      providerName: input.provider_name,
      jwtAudience: input.jwt_audience ?? null,
      roleNames: input.role_names ?? DEFAULT_ROLES,
      createdAt: now,
      updatedAt: now,
    };
    insertJwks(tx, row);
    return { jwks: toJwksJson(row), operations: [] };
  });
}

export function deleteProjectJwks(ctx: Ctx, accountId: string, projectId: string, jwksId: string) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const row = findJwks(tx, projectId, jwksId);
    if (!row) throw notFound(`JWKS ${jwksId} not found in project ${projectId}`);
    deleteJwks(tx, jwksId);
    return toJwksJson(row);
  });
}
