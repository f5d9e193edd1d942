import { iso } from "../../platform/clock.js";
import type { JwksRow } from "./store.js";

export function toJwksJson(row: JwksRow) {
  return {
    id: row.id,
    project_id: row.projectId,
    ...(row.branchId === null ? {} : { branch_id: row.branchId }),
    jwks_url: row.jwksUrl,
    provider_name: row.providerName,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    ...(row.jwtAudience === null ? {} : { jwt_audience: row.jwtAudience }),
    role_names: row.roleNames,
  };
}
