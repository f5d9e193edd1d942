import type { Ctx } from "../../context.js";
import { conflict, notFound, unauthorized } from "../../errors.js";
import type { Tx } from "../../platform/db.js";
import { hashKey } from "../../platform/ids.js";
import { cachedRead } from "../../platform/read-cache.js";
import { requireOrganization, requireProject } from "../access.js";
import { getAccount } from "../accounts/store.js";
import { toCreatedKeyJson, toKeyListJson, toRevokedKeyJson } from "./render.js";
import { bearerSecret, lastUsedSecond } from "./rules.js";
import {
  countAllKeys,
  findAccountKey,
  findKeyByHash,
  insertKey,
  type KeyKind,
  listActiveKeys,
  markRevoked,
  readKeyForAuth,
  recordKeyUse,
} from "./store.js";

export interface Principal {
  accountId: string;
  keyId: number;
  /** Set for an organization key made for one project: it sees that project only. */
  projectId: string | null;
}

/**
 * Adds a key inside the caller's transaction: a new secret from ctx.ids unless one is given (a
 * seed's fixed key). Only its hash is stored; the answer is the one place the secret appears.
 */
export function addApiKey(ctx: Ctx, tx: Tx, accountId: string, name: string, key = ctx.ids.apiKey()) {
  const row = insertKey(tx, { accountId, name, keyHash: hashKey(key), createdAt: ctx.clock.now(accountId) });
  return toCreatedKeyJson(row, key);
}

/** POST /api_keys: the secret is returned here once. */
export function createApiKey(ctx: Ctx, accountId: string, name: string) {
  return ctx.db.transaction((tx) => addApiKey(ctx, tx, accountId, name));
}

/**
 * Makes sure a given secret (e.g. NEON_EMULATOR_API_KEY) exists for the account; a key revoked
 * in this database stays revoked (revocation cannot be undone), which the caller reports.
 */
export function ensureApiKey(
  ctx: Ctx,
  accountId: string,
  key: string,
  name: string,
): "created" | "exists" | "revoked" {
  return ctx.db.transaction((tx) => {
    const existing = findKeyByHash(tx, hashKey(key));
    if (existing) return existing.revokedAt === null ? "exists" : "revoked";
    addApiKey(ctx, tx, accountId, name, key);
    return "created";
  });
}

/** Keys ever created, revoked ones included: zero means a new database. */
export function countKeys(ctx: Ctx): number {
  return countAllKeys(ctx.db);
}

export function listApiKeys(ctx: Ctx, accountId: string) {
  return listKeys(ctx, accountId, "personal");
}

export function revokeApiKey(ctx: Ctx, accountId: string, keyId: number) {
  return ctx.db.transaction((tx) => revokeKey(ctx, tx, accountId, "personal", keyId));
}

/** POST /organizations/{org_id}/api_keys: an org key, for one project when `project_id` is given. */
export function createOrgApiKey(
  ctx: Ctx,
  accountId: string,
  orgId: string,
  input: { key_name: string; project_id?: string | undefined },
) {
  return ctx.db.transaction((tx) => {
    requireOrganization(tx, accountId, orgId);
    const projectId = input.project_id ?? null;
    if (projectId !== null) requireProject(tx, accountId, projectId);
    const key = ctx.ids.apiKey();
    const row = insertKey(tx, {
      accountId,
      name: input.key_name,
      keyHash: hashKey(key),
      createdAt: ctx.clock.now(accountId),
      kind: "org",
      projectId,
    });
    return toCreatedKeyJson(row, key);
  });
}

export function listOrgApiKeys(ctx: Ctx, accountId: string, orgId: string) {
  requireOrganization(ctx.db, accountId, orgId);
  return listKeys(ctx, accountId, "org");
}

export function revokeOrgApiKey(ctx: Ctx, accountId: string, orgId: string, keyId: number) {
  return ctx.db.transaction((tx) => {
    requireOrganization(tx, accountId, orgId);
    return revokeKey(ctx, tx, accountId, "org", keyId);
  });
}

function listKeys(ctx: Ctx, accountId: string, kind: KeyKind) {
  // Keys are created by the account's user, whose name the list shows.
  const creator = getAccount(ctx.db, accountId).name;
  return listActiveKeys(ctx.db, accountId, kind).map((row) => toKeyListJson(row, creator));
}

function revokeKey(ctx: Ctx, tx: Tx, accountId: string, kind: KeyKind, keyId: number) {
  const row = findAccountKey(tx, accountId, kind, keyId);
  if (!row) throw notFound(`API key ${keyId} not found`);
  if (row.keyHash === ctx.config.startKeyHash)
    throw conflict(
      `API key ${keyId} is NEON_EMULATOR_API_KEY, which the emulator runs with: it cannot be revoked while in use (restart without it, or with another key, to revoke it)`,
    );
  // Revoking twice is harmless and answers the same: revocation cannot be undone.
  if (row.revokedAt === null) markRevoked(tx, keyId, ctx.clock.now(accountId));
  return toRevokedKeyJson(row);
}

/**
 * Resolves `Authorization: Bearer <key>` to its account and records the use. A revoked key
 * fails on the very next request because every request reads the key row (or finds the database
 * unchanged since it last did); `last_used_*` always show the latest use (its second and
 * address), written only when either changes. `request` is an object unique to the request.
 */
export function authenticate(ctx: Ctx, header: string | undefined, addr: string, request: object): Principal {
  const hash = hashKey(bearerSecret(header));
  // Cached while the database is unchanged (see cachedRead): revocation is a change, so a
  // revoked key is refused from the next request on, by this process or another one.
  const row = cachedRead(ctx.db, `key:${hash}`, () => readKeyForAuth(ctx.db, hash), request);
  if (!row) throw unauthorized("invalid API key");
  if (row.revokedAt !== null) throw unauthorized("API key has been revoked");
  const at = lastUsedSecond(ctx.clock.now(row.accountId));
  if (row.lastUsedAt !== at || row.lastUsedFromAddr !== addr) recordKeyUse(ctx.db, row.id, at, addr);
  return { accountId: row.accountId, keyId: row.id, projectId: row.projectId };
}
