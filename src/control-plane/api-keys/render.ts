import { iso } from "../../platform/clock.js";
import type { ApiKeyRow } from "./store.js";

const lastUsed = (row: ApiKeyRow) => (row.lastUsedAt === null ? null : iso(row.lastUsedAt));
/** Only a project-scoped organization key carries `project_id`. */
const scope = (row: ApiKeyRow) => (row.projectId === null ? {} : { project_id: row.projectId });

/** The create answer: the only place the secret is ever shown. */
export function toCreatedKeyJson(row: ApiKeyRow, key: string) {
  return {
    id: row.id,
    key,
    name: row.name,
    created_at: iso(row.createdAt),
    created_by: row.createdBy,
    ...scope(row),
  };
}

export function toKeyListJson(row: ApiKeyRow, creatorName: string) {
  return {
    id: row.id,
    name: row.name,
    created_at: iso(row.createdAt),
    created_by: { id: row.createdBy, name: creatorName, image: "" },
    last_used_at: lastUsed(row),
    last_used_from_addr: row.lastUsedFromAddr,
    ...scope(row),
  };
}

export function toRevokedKeyJson(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    created_at: iso(row.createdAt),
    created_by: row.createdBy,
    last_used_at: lastUsed(row),
    last_used_from_addr: row.lastUsedFromAddr,
    revoked: true,
    ...scope(row),
  };
}
