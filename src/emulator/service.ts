import type { Ctx } from "../context.js";
import { requireEndpoint, requireProject } from "../control-plane/access.js";
import { toAccountJson } from "../control-plane/accounts/render.js";
import { addAccount } from "../control-plane/accounts/service.js";
import { addApiKey } from "../control-plane/api-keys/service.js";
import { revokeOtherKeys, revokeProjectKeys } from "../control-plane/api-keys/store.js";
import { closeActivity } from "../control-plane/endpoints/store.js";
import { deleteAccountOperations } from "../control-plane/operations/store.js";
import { clearOrganization } from "../control-plane/organizations/store.js";
import { purgeAccountDeletedProjects } from "../control-plane/projects/recovery-store.js";
import { deleteAccountProjects } from "../control-plane/projects/store.js";
import { badRequest, notFound } from "../errors.js";
import { deleteAccountFaults, insertFault, listAccountFaults } from "./faults-store.js";
import { toFaultJson } from "./render.js";
import type { AccountCreateInput, FaultInput, ResetInput } from "./schema.js";

/** Arms a fault: the next `count` operations of `action` (optionally in one project or endpoint) fail. */
export function armFault(ctx: Ctx, accountId: string, input: FaultInput) {
  return ctx.db.transaction((tx) => {
    if (input.project_id) requireProject(tx, accountId, input.project_id);
    if (input.endpoint_id) {
      if (!input.project_id) throw badRequest("endpoint_id needs project_id too");
      requireEndpoint(tx, accountId, input.project_id, input.endpoint_id);
    }
    const row = insertFault(tx, {
      accountId,
      action: input.action,
      projectId: input.project_id ?? null,
      endpointId: input.endpoint_id ?? null,
      remaining: input.count ?? 1,
      message: input.message ?? `injected failure of ${input.action}`,
      createdAt: ctx.clock.now(accountId),
    });
    return { fault: toFaultJson(row) };
  });
}

export function listFaults(ctx: Ctx, accountId: string) {
  return { faults: listAccountFaults(ctx.db, accountId).map(toFaultJson) };
}

export function clearFaults(ctx: Ctx, accountId: string) {
  return { cleared: deleteAccountFaults(ctx.db, accountId) };
}

/**
 * Empties the caller's account: every project with all it holds (and the keys made for it; deleted
 * projects still recoverable go for good too), its
 * operations, armed faults, invitations and every organization member but its own user. Other keys of the account stay unless `revoke_other_keys` is set; the caller's key always stays.
 */
export function resetAccount(ctx: Ctx, accountId: string, callerKeyId: number, opts: ResetInput) {
  const { deleted, body } = ctx.db.transaction((tx) => {
    const deleted = deleteAccountProjects(tx, accountId);
    const recoverable = purgeAccountDeletedProjects(tx, accountId);
    closeActivity(tx, { accountId }, ctx.clock.now(accountId));
    for (const projectId of deleted) revokeProjectKeys(tx, projectId, ctx.clock.now(accountId));
    clearOrganization(tx, accountId);
    deleteAccountOperations(tx, accountId);
    deleteAccountFaults(tx, accountId);
    const revokedKeys = opts.revoke_other_keys
      ? revokeOtherKeys(tx, accountId, callerKeyId, ctx.clock.now(accountId), ctx.config.startKeyHash)
      : 0;
    // Deleted projects still recoverable go for good too, and are counted.
    const all = [...deleted, ...recoverable];
    return { deleted: all, body: { deleted_projects: all.length, revoked_keys: revokedKeys } };
  });
  // Their computes and data go as a project delete's delete_tenant would take them.
  return { body, events: deleted.map((projectId) => ({ type: "project_deleted" as const, projectId })) };
}

/** A new, empty account with its first key (shown once), for isolating test files on one server. */
export function createIsolatedAccount(ctx: Ctx, input: AccountCreateInput) {
  return ctx.db.transaction((tx) => {
    const account = addAccount(ctx, tx, {
      name: input.name ?? "Test Account",
      email: input.email ?? "test@example.com",
      ...(input.plan ? { plan: input.plan } : {}),
    });
    return { account: toAccountJson(account), key: addApiKey(ctx, tx, account.id, "first key") };
  });
}

/** The front door's CA certificate (PEM); 404 when computes are not real (no front door). */
export function caCertificate(ctx: Ctx): string {
  const door = ctx.config.frontDoor;
  if (!door)
    throw notFound("no Postgres front door runs: computes are real only with NEON_EMULATOR_COMPUTE=postgres");
  return door.caCert;
}
