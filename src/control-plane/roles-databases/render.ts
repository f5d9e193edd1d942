import { iso } from "../../platform/clock.js";
import type { DatabaseRow, RoleRow } from "./store.js";

/** The password is shown only where the public API shows it: on create and reset. */
export function toRoleJson(row: RoleRow, opts: { withPassword?: boolean } = {}) {
  return {
    branch_id: row.branchId,
    name: row.name,
    ...(opts.withPassword ? { password: row.password } : {}),
    protected: row.protected,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export function toDatabaseJson(row: DatabaseRow) {
  return {
    id: row.id,
    branch_id: row.branchId,
    name: row.name,
    owner_name: row.ownerName,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}
