import { iso } from "../../platform/clock.js";
import type { PermissionRow } from "./store.js";

export function toPermissionJson(row: PermissionRow) {
  return {
    id: row.id,
    granted_to_email: row.email,
    granted_at: iso(row.grantedAt),
    ...(row.revokedAt === null ? {} : { revoked_at: iso(row.revokedAt) }),
  };
}
