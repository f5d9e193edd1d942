import type { Ctx } from "../context.js";
import { EmulatorError } from "../errors.js";
import { type Plan, type PlanName, planWithLimits } from "../plans.js";
import type { Tx } from "../platform/db.js";
import { statement } from "../platform/statements.js";

/**
 * The plan's (or NEON_EMULATOR_LIMITS') bounds on how many projects an account, and branches and
 * computes a project, may have: checked inside the transaction that adds one, so concurrent
 * requests cannot pass a limit together. Beyond: 422 with Neon's code and wording.
 */
export function planOf(ctx: Ctx, name: PlanName): Plan {
  return planWithLimits(name, ctx.config.limits);
}

/** An account with its plan's limits as configured (what /users/me and a project's owner show). */
export function withPlan<A extends { plan: PlanName }>(ctx: Ctx, account: A): A & { limits: Plan } {
  return { ...account, limits: planOf(ctx, account.plan) };
}

const count = (tx: Tx, sql: string, id: string) => statement<{ n: number }>(tx, sql).get({ id })?.n ?? 0;

export function requireProjectRoom(ctx: Ctx, tx: Tx, accountId: string, plan: PlanName, adding = 1): void {
  const limit = planOf(ctx, plan).projectsLimit;
  const got = count(tx, "SELECT count(*) AS n FROM projects WHERE account_id = @id", accountId);
  if (got + adding > limit)
    throw new EmulatorError(
      "PROJECTS_LIMIT_EXCEEDED",
      `user projects limit of ${limit} exceeded, got ${got}`,
    );
}

export function requireBranchRoom(ctx: Ctx, tx: Tx, projectId: string, plan: PlanName): void {
  const limit = planOf(ctx, plan).branchesLimit;
  const got = count(tx, "SELECT count(*) AS n FROM branches WHERE project_id = @id", projectId);
  if (got + 1 > limit)
    throw new EmulatorError(
      "BRANCHES_LIMIT_EXCEEDED",
      `project branches limit of ${limit} exceeded, got ${got}`,
    );
}

export function requireComputeRoom(ctx: Ctx, tx: Tx, projectId: string, plan: PlanName): void {
  const limit = planOf(ctx, plan).computesLimit;
  const got = count(tx, "SELECT count(*) AS n FROM endpoints WHERE project_id = @id", projectId);
  if (got + 1 > limit)
    throw new EmulatorError(
      "ENDPOINTS_LIMIT_EXCEEDED",
      `project endpoints limit of ${limit} exceeded, got ${got}`,
    );
}
