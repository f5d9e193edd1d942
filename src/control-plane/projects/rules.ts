/**
 * Projects: what a new project holds by default and how its compute defaults are checked. Pure.
 */
import type { Config } from "../../context.js";
import { badRequest, unprocessable } from "../../errors.js";
import { PLANS, type PlanName } from "../../plans.js";
import type { ProjectRow } from "../access.js";
import { checkDefaultLimits } from "../endpoints/rules.js";
import { DEFAULT_REGION, proxyHost, REGION_IDS } from "../regions/rules.js";
import type { DefaultEndpointSettingsInput, ProjectCreateInput } from "./schema.js";

export const DEFAULT_PG_VERSION = 17;
export const DEFAULT_HISTORY_RETENTION_SECONDS = 86_400;
/** A new project's default branch, owner role and database (as Neon names them). */
export const DEFAULT_BRANCH_NAME = "main";
export const DEFAULT_ROLE_NAME = "neondb_owner";
export const DEFAULT_DATABASE_NAME = "neondb";

/**
 * What Neon shows in a project's settings until they are set (its responses carry them all): no IP
 * allow list, logical replication off, a weekly maintenance window, public and VPC connections
 * allowed, not HIPAA. Rendered under the stored settings, which keep only what was set.
 */
export const DEFAULT_PROJECT_SETTINGS = {
  allowed_ips: { ips: [], protected_branches_only: false },
  enable_logical_replication: false,
  maintenance_window: { weekdays: [5], start_time: "19:00", end_time: "20:00" },
  block_public_connections: false,
  block_vpc_connections: false,
  hipaa: false,
};

/** Whether a project's settings turn logical replication on (its computes run with wal_level=logical). */
export function logicalReplication(settings: unknown): boolean {
  return (settings as { enable_logical_replication?: unknown } | null)?.enable_logical_replication === true;
}

/**
 * A settings change as Neon takes it: logical replication, once on, stays on (the API's
 * description: "Once enabled, logical replication cannot be disabled").
 */
export function checkSettingsChange(current: unknown, input: { enable_logical_replication?: unknown }): void {
  if (logicalReplication(current) && input.enable_logical_replication === false)
    throw badRequest("logical replication cannot be disabled once it has been enabled");
}

/** Compute defaults are checked against the allowed sizes and the plan (as an endpoint's limits are). */
export function checkDefaults(plan: PlanName, settings: DefaultEndpointSettingsInput): void {
  checkDefaultLimits(plan, settings.autoscaling_limit_min_cu, settings.autoscaling_limit_max_cu);
}

/** A new project's row; the top-level compute limits of the request fold into its defaults. */
export function newProjectRow(args: {
  id: string;
  accountId: string;
  plan: PlanName;
  domain: string;
  now: number;
  input: ProjectCreateInput;
  postgres?: Config["postgres"];
}): ProjectRow {
  const { input, plan } = args;
  const regionId = input.region_id ?? DEFAULT_REGION;
  if (!REGION_IDS.includes(regionId))
    throw badRequest(`region_id "${regionId}" is not a known region; allowed: ${REGION_IDS.join(", ")}`);
  const defaults: DefaultEndpointSettingsInput = { ...(input.default_endpoint_settings ?? {}) };
  if (input.autoscaling_limit_min_cu !== undefined)
    defaults.autoscaling_limit_min_cu = input.autoscaling_limit_min_cu;
  if (input.autoscaling_limit_max_cu !== undefined)
    defaults.autoscaling_limit_max_cu = input.autoscaling_limit_max_cu;
  checkDefaults(plan, defaults);
  const pgVersion = input.pg_version ?? DEFAULT_PG_VERSION;
  if (args.postgres && !args.postgres.has(pgVersion))
    throw unprocessable(
      `Postgres ${pgVersion} is not installed in this emulator (installed: ${args.postgres.installed().join(", ") || "none"}); install it with: ${args.postgres.installCommand(pgVersion)}`,
    );
  return {
    id: args.id,
    accountId: args.accountId,
    name: input.name ?? args.id,
    regionId,
    pgVersion,
    platformId: regionId.split("-")[0] as string,
    provisioner: input.provisioner ?? "k8s-neonvm",
    proxyHost: proxyHost(regionId, args.domain),
    cpuUsedSec: 0,
    branchLogicalSizeLimit: PLANS[plan].branchLogicalSizeLimitMib,
    historyRetentionSeconds: input.history_retention_seconds ?? DEFAULT_HISTORY_RETENTION_SECONDS,
    storePasswords: input.store_passwords ?? true,
    locked: false,
    creationSource: "console",
    defaultEndpointSettings: defaults,
    settings: input.settings ?? {},
    computeLastActiveAt: null,
    createdAt: args.now,
    updatedAt: args.now,
  };
}
