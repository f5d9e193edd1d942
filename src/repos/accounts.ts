import { eq, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { accounts } from "../db/schema/index.js";
import { iso } from "../lib/clock.js";
import { prepared } from "../lib/prepared.js";

export type AccountRow = typeof accounts.$inferSelect;

export function getAccount(tx: Tx, id: string): AccountRow {
  const row = prepared(tx, "accounts.get", () =>
    tx
      .select()
      .from(accounts)
      .where(eq(accounts.id, sql.placeholder("id")))
      .prepare(),
  ).get({ id });
  if (!row) throw new Error(`account ${id} is missing`);
  return row;
}

export function findDefaultAccount(tx: Tx): AccountRow | undefined {
  return tx.select().from(accounts).where(eq(accounts.isDefault, true)).get();
}

export function insertAccount(
  ctx: Ctx,
  tx: Tx,
  input: {
    id?: string;
    orgId?: string;
    name: string;
    email: string;
    plan?: "paid" | "free";
    isDefault?: boolean;
  },
): AccountRow {
  const row: AccountRow = {
    id: input.id ?? ctx.ids.uuid(),
    orgId: input.orgId ?? ctx.ids.orgId(),
    name: input.name,
    email: input.email,
    plan: input.plan ?? ctx.config.plan,
    isDefault: input.isDefault ?? false,
    createdAt: ctx.clock.now(),
  };
  tx.insert(accounts).values(row).run();
  return row;
}

/** The account that exists from the first start on; its plan follows NEON_EMULATOR_PLAN. */
export function ensureDefaultAccount(ctx: Ctx): AccountRow {
  return ctx.db.transaction((tx) => {
    const existing = findDefaultAccount(tx);
    if (existing) {
      if (existing.plan !== ctx.config.plan) {
        tx.update(accounts).set({ plan: ctx.config.plan }).where(eq(accounts.id, existing.id)).run();
        return { ...existing, plan: ctx.config.plan };
      }
      return existing;
    }
    return insertAccount(ctx, tx, { name: "Emulator User", email: "user@example.com", isDefault: true });
  });
}

/** GET /users/me: the account seen as the user the key belongs to. */
export function currentUser(ctx: Ctx, accountId: string) {
  const a = getAccount(ctx.db, accountId);
  const [login] = a.email.split("@");
  return {
    active_seconds_limit: a.plan === "free" ? 360_000 : 0,
    auth_accounts: [
      { email: a.email, image: "", login: login ?? a.email, name: a.name, provider: "keycloak" as const },
    ],
    email: a.email,
    id: a.id,
    image: "",
    login: login ?? a.email,
    name: a.name,
    last_name: "",
    projects_limit: a.plan === "free" ? 1 : 1000,
    branches_limit: a.plan === "free" ? 10 : 5000,
    max_autoscaling_limit: a.plan === "free" ? 0.25 : 7,
    plan: a.plan === "free" ? "free_v3" : "scale_v3",
  };
}

export function currentOrganizations(ctx: Ctx, accountId: string) {
  const a = getAccount(ctx.db, accountId);
  const at = iso(a.createdAt);
  return {
    organizations: [
      {
        id: a.orgId,
        name: a.name,
        handle: a.orgId,
        plan: a.plan === "free" ? "free_v3" : "scale_v3",
        created_at: at,
        managed_by: "console",
        updated_at: at,
      },
    ],
  };
}

/** GET /auth: keys are organization keys of the account's organization. */
export function authDetails(ctx: Ctx, accountId: string) {
  return { account_id: getAccount(ctx.db, accountId).orgId, auth_method: "api_key_org" as const };
}
