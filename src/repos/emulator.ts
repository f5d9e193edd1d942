import { and, asc, eq, isNull, ne } from "drizzle-orm";
import type { Ctx } from "../context.js";
import { apiKeys, faults, operations, projects } from "../db/schema/index.js";
import type { OperationAction } from "../domain/operations.js";
import { iso } from "../lib/clock.js";
import { badRequest } from "../lib/errors.js";
import { insertAccount } from "./accounts.js";
import { createApiKey } from "./api-keys.js";
import { requireEndpoint } from "./endpoints.js";
import { requireProject } from "./projects.js";

type FaultRow = typeof faults.$inferSelect;

function faultJson(row: FaultRow) {
  return {
    id: row.id,
    action: row.action,
    ...(row.projectId ? { project_id: row.projectId } : {}),
    ...(row.endpointId ? { endpoint_id: row.endpointId } : {}),
    remaining: row.remaining,
    message: row.message,
    created_at: iso(row.createdAt),
  };
}

export interface FaultInput {
  action: OperationAction;
  count?: number | undefined;
  project_id?: string | undefined;
  endpoint_id?: string | undefined;
  message?: string | undefined;
}

/** Arms a fault: the next `count` operations of `action` (optionally in one project or endpoint) fail. */
export function armFault(ctx: Ctx, accountId: string, input: FaultInput) {
  return ctx.db.transaction((tx) => {
    if (input.project_id) requireProject(tx, accountId, input.project_id);
    if (input.endpoint_id) {
      if (!input.project_id) throw badRequest("endpoint_id needs project_id too");
      requireEndpoint(tx, accountId, input.project_id, input.endpoint_id);
    }
    const row = tx
      .insert(faults)
      .values({
        accountId,
        action: input.action,
        projectId: input.project_id ?? null,
        endpointId: input.endpoint_id ?? null,
        remaining: input.count ?? 1,
        message: input.message ?? `injected failure of ${input.action}`,
        createdAt: ctx.clock.now(),
      })
      .returning()
      .get();
    return { fault: faultJson(row) };
  });
}

export function listFaults(ctx: Ctx, accountId: string) {
  const rows = ctx.db
    .select()
    .from(faults)
    .where(eq(faults.accountId, accountId))
    .orderBy(asc(faults.id))
    .all();
  return { faults: rows.map(faultJson) };
}

export function clearFaults(ctx: Ctx, accountId: string) {
  const cleared = ctx.db.delete(faults).where(eq(faults.accountId, accountId)).run().changes;
  return { cleared };
}

/**
 * Empties the caller's account: every project with all it holds, its operations and armed
 * faults. Other keys of the account stay unless `revoke_other_keys` is set; the caller's key always stays.
 */
export function resetAccount(
  ctx: Ctx,
  accountId: string,
  callerKeyId: number,
  opts: { revoke_other_keys?: boolean | undefined },
) {
  return ctx.db.transaction((tx) => {
    const deletedProjects = tx.delete(projects).where(eq(projects.accountId, accountId)).run().changes;
    tx.delete(operations).where(eq(operations.accountId, accountId)).run();
    tx.delete(faults).where(eq(faults.accountId, accountId)).run();
    let revokedKeys = 0;
    if (opts.revoke_other_keys)
      revokedKeys = tx
        .update(apiKeys)
        .set({ revokedAt: ctx.clock.now() })
        .where(and(eq(apiKeys.accountId, accountId), ne(apiKeys.id, callerKeyId), isNull(apiKeys.revokedAt)))
        .run().changes;
    return { deleted_projects: deletedProjects, revoked_keys: revokedKeys };
  });
}

/** A new, empty account with its first key (shown once), for isolating test files on one server. */
export function createIsolatedAccount(
  ctx: Ctx,
  input: { name?: string | undefined; email?: string | undefined; plan?: "paid" | "free" | undefined },
) {
  return ctx.db.transaction((tx) => {
    const account = insertAccount(ctx, tx, {
      name: input.name ?? "Test Account",
      email: input.email ?? "test@example.com",
      ...(input.plan ? { plan: input.plan } : {}),
    });
    const key = createApiKey(ctx, account.id, "first key", tx);
    return {
      account: {
        id: account.id,
        org_id: account.orgId,
        name: account.name,
        email: account.email,
        plan: account.plan,
      },
      key,
    };
  });
}
