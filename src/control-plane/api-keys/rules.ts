/**
 * API keys (specification: API key, Authentication). A key is a 64-character [a-z0-9] secret
 * from the CSPRNG (platform/ids.ts), shown once, stored only as its SHA-256 hash; keys are
 * account-wide, unlimited, valid until revoked, and revocation cannot be undone. Pure.
 */
import { unauthorized } from "../../errors.js";

const BEARER = /^Bearer ([^\s]+)$/i;

/** The secret of an `Authorization: Bearer <key>` header; 401 when missing or malformed. */
export function bearerSecret(header: string | undefined): string {
  if (!header) throw unauthorized("missing Authorization header; send Authorization: Bearer <API key>");
  const match = BEARER.exec(header.trim());
  if (!match) throw unauthorized("malformed Authorization header; expected Authorization: Bearer <API key>");
  return match[1] as string;
}

/**
 * `last_used_at` is kept to the second, as the public API shows it: a key used many times within
 * one second from one address is written once, so an authenticated read stays a read.
 */
export function lastUsedSecond(ms: number): number {
  return ms - (((ms % 1000) + 1000) % 1000);
}
