import { iso } from "../platform/clock.js";
import type { FaultRow } from "./faults-store.js";

export function toFaultJson(row: FaultRow) {
  return {
    id: row.id,
    action: row.action,
    ...(row.projectId ? { project_id: row.projectId } : {}),
    ...(row.endpointId ? { endpoint_id: row.endpointId } : {}),
    remaining: row.remaining,
    message: row.message,
    created_at: iso(row.createdAt),
  };
}
