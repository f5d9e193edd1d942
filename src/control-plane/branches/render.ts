import { iso, isoMicros } from "../../platform/clock.js";
import type { BranchRow } from "../access.js";
import { NO_TRAFFIC, type Traffic } from "../consumption/meter.js";
import { NO_USAGE, type Usage } from "../endpoints/store.js";

/**
 * A branch; `creator` is the name of the account's user, who made it; `usage` is what its
 * computes have used (endpoints/store.ts usageOf), `traffic` what they sent to clients and wrote
 * (consumption/meter.ts).
 */
export function toBranchJson(
  row: BranchRow,
  creator: string,
  usage: Usage = NO_USAGE,
  traffic: Traffic = NO_TRAFFIC,
) {
  return {
    id: row.id,
    project_id: row.projectId,
    ...(row.parentId ? { parent_id: row.parentId } : {}),
    ...(row.parentLsn ? { parent_lsn: row.parentLsn } : {}),
    ...(row.parentTimestamp !== null ? { parent_timestamp: pointTime(row.parentTimestamp) } : {}),
    name: row.name,
    current_state: row.currentState,
    ...(row.pendingState ? { pending_state: row.pendingState } : {}),
    state_changed_at: iso(row.stateChangedAt),
    logical_size: row.logicalSize,
    creation_source: row.creationSource,
    primary: row.isDefault,
    default: row.isDefault,
    protected: row.protected,
    cpu_used_sec: usage.computeSeconds,
    compute_time_seconds: usage.computeSeconds,
    active_time_seconds: usage.activeSeconds,
    written_data_bytes: traffic.writtenBytes,
    data_transfer_bytes: traffic.transferBytes,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    ...(row.expiresAt !== null ? { expires_at: iso(row.expiresAt) } : {}),
    ...(row.lastResetAt !== null ? { last_reset_at: iso(row.lastResetAt) } : {}),
    ...(row.expiresAt !== null && row.ttlSeconds !== null ? { ttl_interval_seconds: row.ttlSeconds } : {}),
    init_source: row.initSource,
    ...(row.restoreStatus ? { restore_status: row.restoreStatus } : {}),
    ...(row.restoredFrom ? { restored_from: row.restoredFrom } : {}),
    ...(row.restoreStatus === "finalized" && row.restoreTarget ? { restored_as: row.restoreTarget } : {}),
    created_by: { name: creator, image: "" },
  };
}

export function toAnnotationJson(row: BranchRow) {
  return {
    object: { type: "console/branch", id: row.id },
    value: row.annotations ?? {},
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/**
 * A branch's parent_timestamp: to the microsecond when it is a commit's (Postgres stamps commits to
 * the microsecond, and a branch at the time shown must hold that commit), else as other times.
 */
function pointTime(ms: number): string {
  return Number.isInteger(ms) ? iso(ms) : isoMicros(Math.round(ms * 1000));
}
