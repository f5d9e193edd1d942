import { and, asc, eq, isNull, ne, sql } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { prepared, statement } from "../../platform/statements.js";
import { apiKeys } from "./table.js";

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export type KeyKind = ApiKeyRow["kind"];

export function insertKey(
  tx: Tx,
  values: {
    accountId: string;
    name: string;
    keyHash: string;
    createdAt: number;
    kind?: KeyKind;
    projectId?: string | null;
  },
): ApiKeyRow {
  return tx
    .insert(apiKeys)
    .values({ ...values, createdBy: values.accountId })
    .returning()
    .get();
}

export function findKeyByHash(tx: Tx, keyHash: string): ApiKeyRow | undefined {
  return tx.select().from(apiKeys).where(eq(apiKeys.keyHash, keyHash)).get();
}

export function findAccountKey(
  tx: Tx,
  accountId: string,
  kind: KeyKind,
  keyId: number,
): ApiKeyRow | undefined {
  return tx
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId), eq(apiKeys.kind, kind)))
    .get();
}

/** Keys ever created, revoked ones included. */
export function countAllKeys(tx: Tx): number {
  return tx.select({ n: sql<number>`count(*)` }).from(apiKeys).get()?.n ?? 0;
}

export function listActiveKeys(tx: Tx, accountId: string, kind: KeyKind): ApiKeyRow[] {
  return prepared(tx, "apiKeys.list", () =>
    tx
      .select()
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.accountId, sql.placeholder("accountId")),
          eq(apiKeys.kind, sql.placeholder("kind")),
          isNull(apiKeys.revokedAt),
        ),
      )
      .orderBy(asc(apiKeys.id))
      .prepare(),
  ).all({ accountId, kind });
}

/** A project's keys die with it: revoked in the transaction that deletes the project. */
export function revokeProjectKeys(tx: Tx, projectId: string, at: number): number {
  return tx
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.projectId, projectId), isNull(apiKeys.revokedAt)))
    .run().changes;
}

export function markRevoked(tx: Tx, keyId: number, at: number): void {
  tx.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, keyId)).run();
}

/** Revokes every unrevoked key of the account but one; returns how many. */
export function revokeOtherKeys(
  tx: Tx,
  accountId: string,
  keepId: number,
  at: number,
  keepHash?: string | undefined,
): number {
  return tx
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(
      and(
        eq(apiKeys.accountId, accountId),
        ne(apiKeys.id, keepId),
        isNull(apiKeys.revokedAt),
        keepHash ? ne(apiKeys.keyHash, keepHash) : undefined,
      ),
    )
    .run().changes;
}

/** What authentication reads of a key. */
export interface KeyAuthRow {
  id: number;
  accountId: string;
  revokedAt: number | null;
  lastUsedAt: number | null;
  lastUsedFromAddr: string;
  kind: KeyKind;
  projectId: string | null;
}

export function readKeyForAuth(tx: Tx, keyHash: string): KeyAuthRow | undefined {
  return statement<KeyAuthRow>(
    tx,
    `SELECT id, account_id AS accountId, revoked_at AS revokedAt, last_used_at AS lastUsedAt,
            last_used_from_addr AS lastUsedFromAddr, kind, project_id AS projectId
       FROM api_keys WHERE key_hash = @hash`,
  ).get({ hash: keyHash });
}

/** Records a use; never moves backwards, and a key revoked since it was read is left as it is. */
export function recordKeyUse(tx: Tx, keyId: number, at: number, addr: string): void {
  statement(
    tx,
    `UPDATE api_keys SET last_used_at = @at, last_used_from_addr = @addr
      WHERE id = @id AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at <= @at)`,
  ).run({ at, addr, id: keyId });
}
