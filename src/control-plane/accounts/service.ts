import type { Ctx } from "../../context.js";
import type { PlanName } from "../../plans.js";
import type { Tx } from "../../platform/db.js";
import { requireOrganization } from "../access.js";
import { planOf } from "../limits.js";
import { addOwnerMember } from "../organizations/service.js";
import { toCurrentUserJson, toOrganizationJson } from "./render.js";
import { type AccountRow, findDefaultAccount, getAccount, insertAccount, setPlan } from "./store.js";

/** Adds an account inside the caller's transaction (ids from ctx unless given). */
export function addAccount(
  ctx: Ctx,
  tx: Tx,
  input: { id?: string; name: string; email: string; plan?: PlanName; isDefault?: boolean },
): AccountRow {
  const row: AccountRow = {
    id: input.id ?? ctx.ids.uuid(),
    orgId: ctx.ids.orgId(),
    name: input.name,
    email: input.email,
    plan: input.plan ?? ctx.config.plan,
    isDefault: input.isDefault ?? false,
    createdAt: ctx.clock.now(null),
    spendingLimitCents: null,
  };
  insertAccount(tx, row);
  addOwnerMember(ctx, tx, row);
  return row;
}

/** The account that exists from the first start on; its plan follows NEON_EMULATOR_PLAN. */
export function ensureDefaultAccount(ctx: Ctx): AccountRow {
  return ctx.db.transaction((tx) => {
    const existing = findDefaultAccount(tx);
    if (existing) {
      if (existing.plan !== ctx.config.plan) {
        setPlan(tx, existing.id, ctx.config.plan);
        return { ...existing, plan: ctx.config.plan };
      }
      return existing;
    }
    return addAccount(ctx, tx, { name: "Emulator User", email: "user@example.com", isDefault: true });
  });
}

export function currentUser(ctx: Ctx, accountId: string) {
  const account = getAccount(ctx.db, accountId);
  return toCurrentUserJson(account, planOf(ctx, account.plan));
}

export function currentOrganizations(ctx: Ctx, accountId: string) {
  return { organizations: [toOrganizationJson(getAccount(ctx.db, accountId))] };
}

/** GET /organizations/{org_id}: the account's organization; any other id is not found (404, as for every other account's objects). */
export function organization(ctx: Ctx, accountId: string, orgId: string) {
  return toOrganizationJson(requireOrganization(ctx.db, accountId, orgId));
}

/** GET /auth: keys are organization keys of the account's organization. */
export function authDetails(ctx: Ctx, accountId: string) {
  return { account_id: getAccount(ctx.db, accountId).orgId, auth_method: "api_key_org" as const };
}
