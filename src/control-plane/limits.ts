import type { Ctx } from "../context.js";
import { EmulatorError } from "../errors.js";
import { type Plan, type PlanName, planWithLimits } from "../plans.js";
import type { Tx } from "../platform/db.js";
import { statement } from "../platform/statements.js";
import { quotaUsage } from "./endpoints/store.js";
import { quotaExceeded, quotaOf, reachedQuota } from "./projects/quota.js";
import { monthEndOf, monthStartOf } from "./projects/render.js";
import { projectQuotaJson } from "./projects/store.js";

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

/** Each limit: the plan's figure, what counts against it, and Neon's code and wording beyond it. */
const LIMITS = {
  projects: {
    of: (plan: Plan) => plan.projectsLimit,
    count: "SELECT count(*) AS n FROM projects WHERE account_id = @id",
    code: "PROJECTS_LIMIT_EXCEEDED",
    what: "user projects",
  },
  branches: {
    of: (plan: Plan) => plan.branchesLimit,
    count: "SELECT count(*) AS n FROM branches WHERE project_id = @id",
    code: "BRANCHES_LIMIT_EXCEEDED",
    what: "project branches",
  },
  computes: {
    of: (plan: Plan) => plan.computesLimit,
    // Kept by triggers on endpoints (see endpointVersions): no walk over the project's computes.
    count: "SELECT endpoints AS n FROM endpoint_versions WHERE project_id = @id",
    code: "ENDPOINTS_LIMIT_EXCEEDED",
    what: "project endpoints",
  },
} as const;

/** One more of `kind` for the account or project `id` fits its plan's limit, or 422. */
function requireRoom(ctx: Ctx, tx: Tx, kind: keyof typeof LIMITS, id: string, plan: PlanName): void {
  const { of, count, code, what } = LIMITS[kind];
  const limit = of(planOf(ctx, plan));
  const got = statement<{ n: number }>(tx, count).get({ id })?.n ?? 0;
  if (got + 1 > limit) throw new EmulatorError(code, `${what} limit of ${limit} exceeded, got ${got}`);
}

export const requireProjectRoom = (ctx: Ctx, tx: Tx, accountId: string, plan: PlanName) =>
  requireRoom(ctx, tx, "projects", accountId, plan);
export const requireBranchRoom = (ctx: Ctx, tx: Tx, projectId: string, plan: PlanName) =>
  requireRoom(ctx, tx, "branches", projectId, plan);
export const requireComputeRoom = (ctx: Ctx, tx: Tx, projectId: string, plan: PlanName) =>
  requireRoom(ctx, tx, "computes", projectId, plan);

/**
 * Why no compute of the project may start: its quota (settings.quota) is used up in the current
 * consumption period (the 422 to answer, with the quota's reason; projects/quota.ts). Null when
 * one may.
 */
export function quotaUsedUp(tx: Tx, projectId: string, now: number): EmulatorError | null {
  const quota = quotaOf(projectQuotaJson(tx, projectId));
  if (!quota) return null;
  const which = reachedQuota(quota, quotaUsage(tx, projectId, now, monthStartOf(now)));
  return which ? quotaExceeded(projectId, which, quota, monthEndOf(now)) : null;
}

/** A compute of the project may start (quotaUsedUp), or 422. */
export function requireQuotaLeft(tx: Tx, projectId: string, now: number): void {
  const refusal = quotaUsedUp(tx, projectId, now);
  if (refusal) throw refusal;
}
