import { iso } from "../../platform/clock.js";
import type { EndpointRow } from "../access.js";

/** `pending_state` appears in create/update-style responses only, never in lists (spec, endpoint table). */
export function toEndpointJson(row: EndpointRow, opts: { withPending: boolean }) {
  return {
    host: row.host,
    id: row.id,
    ...(row.name !== null ? { name: row.name } : {}),
    project_id: row.projectId,
    branch_id: row.branchId,
    autoscaling_limit_min_cu: row.minCu,
    autoscaling_limit_max_cu: row.maxCu,
    region_id: row.regionId,
    type: row.type,
    current_state: row.currentState,
    ...(opts.withPending && row.pendingState !== null ? { pending_state: row.pendingState } : {}),
    settings: row.settings,
    pooler_enabled: row.poolerEnabled,
    pooler_mode: row.poolerMode,
    disabled: row.disabled,
    passwordless_access: row.passwordlessAccess,
    ...(row.lastActive !== null ? { last_active: iso(row.lastActive) } : {}),
    creation_source: row.creationSource,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    ...(row.startedAt !== null ? { started_at: iso(row.startedAt) } : {}),
    ...(row.suspendedAt !== null ? { suspended_at: iso(row.suspendedAt) } : {}),
    proxy_host: row.proxyHost,
    suspend_timeout_seconds: row.suspendTimeoutSeconds,
    provisioner: row.provisioner,
  };
}
