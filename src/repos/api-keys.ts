import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { apiKeys } from "../db/schema/index.js";
import { hashKey } from "../domain/ids.js";
import { iso } from "../lib/clock.js";
import { notFound, unauthorized } from "../lib/errors.js";
import { prepared, statement } from "../lib/prepared.js";
import { cachedRead } from "../lib/read-cache.js";
import { getAccount } from "./accounts.js";

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export interface Principal {
  accountId: string;
  keyId: number;
}

function insertKey(ctx: Ctx, tx: Tx, accountId: string, name: string, key: string): ApiKeyRow {
  return tx
    .insert(apiKeys)
    .values({
      accountId,
      name,
      keyHash: hashKey(key),
      createdAt: ctx.clock.now(),
      createdBy: accountId,
    })
    .returning()
    .get();
}

/** Creates a key; the secret is returned here once and only its hash is stored. */
export function createApiKey(ctx: Ctx, accountId: string, name: string, tx: Tx = ctx.db) {
  const key = ctx.ids.apiKey();
  const row = insertKey(ctx, tx, accountId, name, key);
  return { id: row.id, key, name: row.name, created_at: iso(row.createdAt), created_by: row.createdBy };
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
    const existing = tx
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.keyHash, hashKey(key)))
      .get();
    if (existing) return existing.revokedAt === null ? "exists" : "revoked";
    insertKey(ctx, tx, accountId, name, key);
    return "created";
  });
}

/** Keys ever created, revoked ones included: zero means a new database. */
export function countAllKeys(ctx: Ctx): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(apiKeys).get()?.n ?? 0;
}

function keyListJson(row: ApiKeyRow, creatorName: string) {
  return {
    id: row.id,
    name: row.name,
    created_at: iso(row.createdAt),
    created_by: { id: row.createdBy, name: creatorName, image: "" },
    last_used_at: row.lastUsedAt === null ? null : iso(row.lastUsedAt),
    last_used_from_addr: row.lastUsedFromAddr,
  };
}

export function listApiKeys(ctx: Ctx, accountId: string) {
  const stmt = prepared(ctx.db, "apiKeys.list", () =>
    ctx.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.accountId, sql.placeholder("accountId")), isNull(apiKeys.revokedAt)))
      .orderBy(asc(apiKeys.id))
      .prepare(),
  );
  // Keys are created by the account's user, whose name the list shows.
  const creator = getAccount(ctx.db, accountId).name;
  return stmt.all({ accountId }).map((row) => keyListJson(row, creator));
}

export function revokeApiKey(ctx: Ctx, accountId: string, keyId: number) {
  return ctx.db.transaction((tx) => {
    const row = tx
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId)))
      .get();
    if (!row) throw notFound(`API key ${keyId} not found`);
    // Revoking twice is harmless and answers the same: revocation cannot be undone.
    const revokedAt = row.revokedAt ?? ctx.clock.now();
    if (row.revokedAt === null) tx.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, keyId)).run();
    return {
      id: row.id,
      name: row.name,
      created_at: iso(row.createdAt),
      created_by: row.createdBy,
      last_used_at: row.lastUsedAt === null ? null : iso(row.lastUsedAt),
      last_used_from_addr: row.lastUsedFromAddr,
      revoked: true,
    };
  });
}

const BEARER = /^Bearer ([^\s]+)$/i;

/**
 * `last_used_at` is kept to the second, as the public API shows it: a key used many times within
 * one second from one address is written once, so an authenticated read stays a read.
 */
function lastUsedSecond(ms: number): number {
  return ms - (((ms % 1000) + 1000) % 1000);
}

interface KeyAuthRow {
  id: number;
  accountId: string;
  revokedAt: number | null;
  lastUsedAt: number | null;
  lastUsedFromAddr: string;
}

/**
 * Resolves `Authorization: Bearer <key>` to its account and records the use. A revoked key
 * fails on the very next request because every request reads the key row (or finds the database
 * unchanged since it last did); `last_used_*` always show the latest use (its second and
 * address), written only when either changes. `request` is an object unique to the request.
 */
export function authenticate(ctx: Ctx, header: string | undefined, addr: string, request: object): Principal {
  if (!header) throw unauthorized("missing Authorization header; send Authorization: Bearer <API key>");
  const match = BEARER.exec(header.trim());
  if (!match) throw unauthorized("malformed Authorization header; expected Authorization: Bearer <API key>");
  const hash = hashKey(match[1] as string);
  // Cached while the database is unchanged (see cachedRead): revocation is a change, so a
  // revoked key is refused from the next request on, by this process or another one.
  const row = cachedRead(
    ctx.db,
    `key:${hash}`,
    () =>
      statement<KeyAuthRow>(
        ctx.db,
        `SELECT id, account_id AS accountId, revoked_at AS revokedAt, last_used_at AS lastUsedAt,
              last_used_from_addr AS lastUsedFromAddr
         FROM api_keys WHERE key_hash = @hash`,
      ).get({ hash }),
    request,
  );
  if (!row) throw unauthorized("invalid API key");
  if (row.revokedAt !== null) throw unauthorized("API key has been revoked");
  const at = lastUsedSecond(ctx.clock.now());
  if (row.lastUsedAt !== at || row.lastUsedFromAddr !== addr)
    statement(
      ctx.db,
      // Never moves backwards, and a key revoked since the read above is left as it is.
      `UPDATE api_keys SET last_used_at = @at, last_used_from_addr = @addr
        WHERE id = @id AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at <= @at)`,
    ).run({ at, addr, id: row.id });
  return { accountId: row.accountId, keyId: row.id };
}
