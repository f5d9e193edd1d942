import { PLANS, type Plan } from "../../plans.js";
import { iso } from "../../platform/clock.js";
import type { ProjectRow } from "../access.js";
import type { AccountRow } from "../accounts/store.js";
import { NO_TRAFFIC, type Traffic } from "../consumption/meter.js";
import { NO_USAGE, type Usage } from "../endpoints/store.js";
import { DEFAULT_PROJECT_SETTINGS } from "./rules.js";

const MIB = 1024 * 1024;

/**
 * A project's settings as the API shows them: Neon's defaults under what was set, the IP allow
 * list's fields included (a list set without `protected_branches_only` shows it false).
 */
function renderSettings(settings: Record<string, unknown>) {
  const allowed = settings.allowed_ips;
  return {
    ...DEFAULT_PROJECT_SETTINGS,
    ...settings,
    ...(allowed && typeof allowed === "object" && !Array.isArray(allowed)
      ? { allowed_ips: { ...DEFAULT_PROJECT_SETTINGS.allowed_ips, ...allowed } }
      : {}),
  };
}

function common(row: ProjectRow) {
  return {
    id: row.id,
    platform_id: row.platformId,
    region_id: row.regionId,
    name: row.name,
    provisioner: row.provisioner,
    default_endpoint_settings: row.defaultEndpointSettings,
    settings: renderSettings(row.settings),
    pg_version: row.pgVersion,
    proxy_host: row.proxyHost,
    branch_logical_size_limit: row.branchLogicalSizeLimit,
    branch_logical_size_limit_bytes: row.branchLogicalSizeLimit * MIB,
    store_passwords: row.storePasswords,
    cpu_used_sec: row.cpuUsedSec,
    locked: row.locked,
    creation_source: row.creationSource,
    history_retention_seconds: row.historyRetentionSeconds,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    ...(row.computeLastActiveAt ? { compute_last_active_at: iso(row.computeLastActiveAt) } : {}),
    owner_id: row.accountId,
  };
}

/** A project as the project list shows it. */
export function toProjectListItem(row: ProjectRow, account: AccountRow, usage: Usage = NO_USAGE) {
  return {
    ...common(row),
    cpu_used_sec: usage.computeSeconds,
    active_time: usage.activeSeconds,
    org_id: account.orgId,
    org_name: account.name,
  };
}

/** The start of the consumption period (the calendar month, UTC) that holds `ms`. */
export function monthStartOf(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The end of the consumption period that holds `ms` (the next month's start). */
export function monthEndOf(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/**
 * A project as GET/POST/PATCH/DELETE /projects/{id} show it. `usage`: its computes' lifetime
 * figures (`cpu_used_sec`) and those of the current consumption period, and the storage it held
 * in that period (`data_storage_bytes_hour`).
 */
export function toProjectJson(
  row: ProjectRow,
  account: AccountRow & { limits: Plan },
  now: number,
  usage: { lifetime: Usage; period: Usage; traffic: Traffic; storageByteHours: number } = {
    lifetime: NO_USAGE,
    period: NO_USAGE,
    traffic: NO_TRAFFIC,
    storageByteHours: 0,
  },
) {
  const start = monthStartOf(now);
  const end = monthEndOf(now);
  return {
    ...common(row),
    cpu_used_sec: usage.lifetime.computeSeconds,
    data_storage_bytes_hour: usage.storageByteHours,
    data_transfer_bytes: usage.traffic.transferBytes,
    written_data_bytes: usage.traffic.writtenBytes,
    compute_time_seconds: usage.period.computeSeconds,
    active_time_seconds: usage.period.activeSeconds,
    consumption_period_start: iso(start),
    consumption_period_end: iso(end),
    owner: {
      email: account.email,
      name: account.name,
      branches_limit: account.limits.branchesLimit,
      subscription_type: PLANS[account.plan].subscriptionType,
    },
    org_id: account.orgId,
  };
}
