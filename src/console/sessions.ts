import { randomBytes } from "node:crypto";
import { and, eq, gt, lte } from "drizzle-orm";
import type { Db } from "../platform/db.js";
import { hashKey } from "../platform/ids.js";
import { consoleSessions, consoleSignInTokens } from "./table.js";

/**
 * Who a browser is: one-time sign-in links (as Jupyter prints one at start) become sessions held
 * in an HttpOnly cookie. Only hashes of the link's token and of the cookie are stored; each
 * session has its own CSRF token, which every form of the console carries.
 *
 * Times are wall-clock milliseconds: a manual clock advanced by a year must not sign anyone out.
 */

/** A printed link stays usable for a day, or until it is used once. */
export const SIGN_IN_LINK_MS = 24 * 3_600_000;
/** A browser stays signed in for a week. */
export const SESSION_MS = 7 * 24 * 3_600_000;

const secret = () => randomBytes(32).toString("base64url");

/** A new one-time sign-in token for the account; expired tokens are removed on the way. */
export function createSignInToken(db: Db, accountId: string, now: number): string {
  const token = secret();
  db.transaction((tx) => {
    tx.delete(consoleSignInTokens).where(lte(consoleSignInTokens.expiresAt, now)).run();
    tx.insert(consoleSignInTokens)
      .values({ tokenHash: hashKey(token), accountId, expiresAt: now + SIGN_IN_LINK_MS })
      .run();
  });
  return token;
}

/** A one-time sign-in link to the console at `origin` (e.g. http://127.0.0.1:4444), and when it expires. */
export function signInLink(
  db: Db,
  accountId: string,
  origin: string,
  now: number,
): { url: string; expiresAt: number } {
  const token = createSignInToken(db, accountId, now);
  return { url: `${origin}/app/sign-in?token=${token}`, expiresAt: now + SIGN_IN_LINK_MS };
}

export interface Session {
  accountId: string;
  csrfToken: string;
}

/** Redeems a sign-in token (it works once): a new session and the cookie value that names it. */
export function redeemSignInToken(
  db: Db,
  token: string,
  now: number,
): { cookie: string; session: Session } | undefined {
  return db.transaction((tx) => {
    const row = tx
      .delete(consoleSignInTokens)
      .where(eq(consoleSignInTokens.tokenHash, hashKey(token)))
      .returning()
      .get();
    if (!row || row.expiresAt <= now) return undefined;
    tx.delete(consoleSessions).where(lte(consoleSessions.expiresAt, now)).run();
    const cookie = secret();
    const session = { accountId: row.accountId, csrfToken: secret() };
    tx.insert(consoleSessions)
      .values({ idHash: hashKey(cookie), ...session, createdAt: now, expiresAt: now + SESSION_MS })
      .run();
    return { cookie, session };
  });
}

/** The session a cookie names, if it has not expired. */
export function findSession(db: Db, cookie: string, now: number): Session | undefined {
  return db
    .select({ accountId: consoleSessions.accountId, csrfToken: consoleSessions.csrfToken })
    .from(consoleSessions)
    .where(and(eq(consoleSessions.idHash, hashKey(cookie)), gt(consoleSessions.expiresAt, now)))
    .get();
}

export function endSession(db: Db, cookie: string): void {
  db.delete(consoleSessions)
    .where(eq(consoleSessions.idHash, hashKey(cookie)))
    .run();
}
