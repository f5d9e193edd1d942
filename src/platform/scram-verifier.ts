import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";
import { requireFromPackage } from "./package-root.js";

/**
 * SCRAM-SHA-256 verifiers as Postgres keeps them in pg_authid.rolpassword
 * (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, base64), and the keys of a login.
 * The front door authenticates clients against them; the compute driver tells whether one still
 * holds the password the control plane knows.
 */

export interface Verifier {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

/** What logs in to a server whose verifier it came from without the password (as Neon's proxy does). */
export interface ScramKeys {
  clientKey: Buffer;
  serverKey: Buffer;
}

export const ITERATIONS = 4096;

export const hmac = (key: Buffer, data: string | Buffer) => createHmac("sha256", key).update(data).digest();
export const sha256 = (data: Buffer) => createHash("sha256").update(data).digest();

/** Salted passwords by password, salt and iterations: PBKDF2 is the costly step of each login. */
const salted = new Map<string, Buffer>();
const SALTED_KEPT = 1000;

let saslprepModule: typeof import("@mongodb-js/saslprep") | undefined;

/**
 * A password as Postgres prepares it before hashing it (pg_saslprep, libpq alike): an ASCII one as
 * it is; any other through SASLprep (RFC 4013: spaces mapped, characters mapped to nothing removed,
 * NFKC), or as it is when SASLprep refuses it (a prohibited or unassigned character). So a password
 * set with SQL holds on the front door's cleartext paths (/sql, the WebSocket's, `endpoint=…;`) as it
 * does over SCRAM. The library is loaded at first use: it inflates its tables as it loads, which the
 * start-up snapshot cannot hold (see main.ts).
 */
function prepared(password: string): string {
  if (!/[^\p{ASCII}]/u.test(password)) return password;
  saslprepModule ??= requireFromPackage()("@mongodb-js/saslprep") as typeof import("@mongodb-js/saslprep");
  try {
    return saslprepModule.saslprep(password);
  } catch {
    return password;
  }
}

export function saltedPassword(password: string, salt: Buffer, iterations: number): Buffer {
  const key = `${iterations}:${salt.toString("base64")}:${password}`;
  let value = salted.get(key);
  if (!value) {
    value = pbkdf2Sync(prepared(password), salt, iterations, 32, "sha256");
    if (salted.size >= SALTED_KEPT) salted.delete(salted.keys().next().value as string);
    salted.set(key, value);
  }
  return value;
}

/** The keys of a password under a salt and iteration count. */
export function keysOf(password: string, salt: Buffer, iterations: number): ScramKeys {
  const sp = saltedPassword(password, salt, iterations);
  return { clientKey: hmac(sp, "Client Key"), serverKey: hmac(sp, "Server Key") };
}

/** One verifier per password for the life of the process (a fresh salt each start). */
const made = new Map<string, Verifier>();

export function verifierOf(password: string): Verifier {
  let v = made.get(password);
  if (!v) {
    const salt = randomBytes(16);
    const keys = keysOf(password, salt, ITERATIONS);
    v = { salt, iterations: ITERATIONS, storedKey: sha256(keys.clientKey), serverKey: keys.serverKey };
    if (made.size >= SALTED_KEPT) made.delete(made.keys().next().value as string);
    made.set(password, v);
  }
  return v;
}

/** A verifier as pg_authid keeps it: given as a role's PASSWORD, Postgres stores it as it is. */
export function verifierText(v: Verifier): string {
  const b64 = (b: Buffer) => b.toString("base64");
  return `SCRAM-SHA-256$${v.iterations}:${b64(v.salt)}$${b64(v.storedKey)}:${b64(v.serverKey)}`;
}

/** A verifier nothing matches (a role that does not exist goes through the same exchange). */
export function unmatchable(): Verifier {
  return {
    salt: randomBytes(16),
    iterations: ITERATIONS,
    storedKey: randomBytes(32),
    serverKey: randomBytes(32),
  };
}

/**
 * The most iterations a verifier may ask for (Postgres' default is 4096): checking a password costs
 * that many hashes on the one thread that serves every client, and SQL may set any count
 * (scram_iterations, Postgres 16+).
 */
const MAX_ITERATIONS = 100_000;

const FORMAT = /^SCRAM-SHA-256\$(\d+):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/;

/** A pg_authid SCRAM verifier, or undefined for anything else (no password, an MD5 hash). */
export function parseVerifier(text: string | null | undefined): Verifier | undefined {
  const m = text ? FORMAT.exec(text) : null;
  if (!m) return undefined;
  const iterations = Number(m[1]);
  const storedKey = Buffer.from(m[3] as string, "base64");
  const serverKey = Buffer.from(m[4] as string, "base64");
  if (
    !Number.isSafeInteger(iterations) ||
    iterations < 1 ||
    iterations > MAX_ITERATIONS ||
    storedKey.length !== 32 ||
    serverKey.length !== 32
  )
    return undefined;
  return { salt: Buffer.from(m[2] as string, "base64"), iterations, storedKey, serverKey };
}

/** Whether `password` is the one the verifier was made from. */
export function verifies(verifier: Verifier, password: string): boolean {
  const keys = keysOf(password, verifier.salt, verifier.iterations);
  const stored = sha256(keys.clientKey);
  return timingSafeEqual(stored, verifier.storedKey);
}
