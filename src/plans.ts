/**
 * Every difference between the free and the paid plan, once. The rest of the code asks the plan
 * (`PLANS[account.plan]`) instead of comparing plan names.
 */
export type PlanName = "paid" | "free";

export interface Plan {
  /** The subscription name the public API shows (`/users/me`, `project.owner`, organizations). */
  subscriptionType: string;
  /** A fixed compute size every endpoint must have, or null when any allowed size may be chosen. */
  fixedComputeCu: number | null;
  /** The largest compute size an endpoint may scale to. */
  maxAutoscalingCu: number;
  /** Read replicas (`read_only` endpoints) are a paid-plan feature (specification, rule 2). */
  readReplicas: boolean;
  /** `branch_logical_size_limit` of a new project, in MiB. */
  branchLogicalSizeLimitMib: number;
  /** Projects an account may have (Neon's plans: Free 20, Scale 1,000). */
  projectsLimit: number;
  /** Branches a project may have. */
  branchesLimit: number;
  /** Compute endpoints a project may have: Neon publishes no figure; the emulator's bound. */
  computesLimit: number;
  /** Compute active time allowed per month, in seconds; 0 means unlimited. */
  activeSecondsLimit: number;
  /** An organization spending limit can be set (Neon: Launch and Scale plans). */
  spendingLimit: boolean;
  /** The consumption history routes answer (Neon: paid plans). */
  consumptionHistory: boolean;
}

/** The free tier's compute: fixed 0.25 CU (specification, Limits). */
export const FREE_PLAN_CU = 0.25;

export const PLANS: Record<PlanName, Plan> = {
  free: {
    subscriptionType: "free_v3",
    fixedComputeCu: FREE_PLAN_CU,
    maxAutoscalingCu: FREE_PLAN_CU,
    readReplicas: false,
    branchLogicalSizeLimitMib: 512,
    projectsLimit: 20,
    branchesLimit: 10,
    computesLimit: 20,
    activeSecondsLimit: 360_000,
    spendingLimit: false,
    consumptionHistory: false,
  },
  paid: {
    subscriptionType: "scale_v3",
    fixedComputeCu: null,
    maxAutoscalingCu: 7,
    readReplicas: true,
    branchLogicalSizeLimitMib: 5_242_880,
    projectsLimit: 1000,
    branchesLimit: 5000,
    computesLimit: 500,
    activeSecondsLimit: 0,
    spendingLimit: true,
    consumptionHistory: true,
  },
};

/** The limits NEON_EMULATOR_LIMITS may override, for every account whatever its plan. */
export const LIMIT_NAMES = ["projects", "branches", "computes"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];
export type LimitOverrides = Partial<Record<LimitName, number>>;

/** The plan with the configured limits in place of its own. */
export function planWithLimits(name: PlanName, overrides: LimitOverrides | undefined): Plan {
  const plan = PLANS[name];
  if (!overrides) return plan;
  return {
    ...plan,
    projectsLimit: overrides.projects ?? plan.projectsLimit,
    branchesLimit: overrides.branches ?? plan.branchesLimit,
    computesLimit: overrides.computes ?? plan.computesLimit,
  };
}
