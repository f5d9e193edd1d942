import { isoMicros } from "../../platform/clock.js";
import type { OperationRow } from "./store.js";

export function toOperationJson(row: OperationRow) {
  return {
    id: row.id,
    project_id: row.projectId,
    ...(row.branchId ? { branch_id: row.branchId } : {}),
    ...(row.endpointId ? { endpoint_id: row.endpointId } : {}),
    action: row.action,
    status: row.status,
    ...(row.error ? { error: row.error } : {}),
    failures_count: row.failuresCount,
    created_at: isoMicros(row.createdUs),
    // Never before created_at (which may lead the clock by microseconds): microseconds too.
    updated_at: isoMicros(Math.max(row.updatedAt * 1000, row.createdUs)),
    total_duration_ms: row.totalDurationMs,
  };
}
export type OperationJson = ReturnType<typeof toOperationJson>;
