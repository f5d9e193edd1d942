import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * SCRAM-SHA-256 (RFC 5802 / 7677) as Postgres speaks it, both ways: the front door is the server
 * to clients (with SCRAM-SHA-256-PLUS channel binding, `tls-server-end-point`, over TLS) and a
 * client to the compute behind it. No library on npm does the server side with channel binding.
 */

export const SCRAM = "SCRAM-SHA-256";
export const SCRAM_PLUS = "SCRAM-SHA-256-PLUS";
const ITERATIONS = 4096;

export class ScramError extends Error {}

const hmac = (key: Buffer, data: string | Buffer) => createHmac("sha256", key).update(data).digest();
const sha256 = (data: Buffer) => createHash("sha256").update(data).digest();
const xor = (a: Buffer, b: Buffer) => Buffer.from(a.map((byte, i) => byte ^ (b[i] ?? 0)));

/** Salted passwords by password, salt and iterations: PBKDF2 is the costly step of each login. */
const salted = new Map<string, Buffer>();
const SALTED_KEPT = 1000;

function saltedPassword(password: string, salt: Buffer, iterations: number): Buffer {
  const key = `${iterations}:${salt.toString("base64")}:${password}`;
  let value = salted.get(key);
  if (!value) {
    value = pbkdf2Sync(password.normalize("NFKC"), salt, iterations, 32, "sha256");
    if (salted.size >= SALTED_KEPT) salted.delete(salted.keys().next().value as string);
    salted.set(key, value);
  }
  return value;
}

interface Verifier {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

/** One verifier per password for the life of the process (a fresh salt each start). */
const verifiers = new Map<string, Verifier>();

function verifierOf(password: string): Verifier {
  let v = verifiers.get(password);
  if (!v) {
    const salt = randomBytes(16);
    const sp = saltedPassword(password, salt, ITERATIONS);
    v = {
      salt,
      iterations: ITERATIONS,
      storedKey: sha256(hmac(sp, "Client Key")),
      serverKey: hmac(sp, "Server Key"),
    };
    if (verifiers.size >= SALTED_KEPT) verifiers.delete(verifiers.keys().next().value as string);
    verifiers.set(password, v);
  }
  return v;
}

function attributes(message: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(",")) {
    const eq = part.indexOf("=");
    if (eq === 1) out.set(part[0] as string, part.slice(2));
  }
  return out;
}

/**
 * The server side of one exchange. `channelBinding` is the TLS certificate hash when the
 * connection is TLS (SCRAM-SHA-256-PLUS offered), undefined otherwise.
 */
export class ScramServer {
  private clientFirstBare = "";
  private serverFirst = "";
  private gs2Header = "";
  private nonce = "";
  private readonly verifier: Verifier;

  /** `password` null: a role that does not exist; a random verifier no proof matches (and no PBKDF2). */
  constructor(
    password: string | null,
    private readonly channelBinding: Buffer | undefined,
  ) {
    this.verifier =
      password === null
        ? {
            salt: randomBytes(16),
            iterations: ITERATIONS,
            storedKey: randomBytes(32),
            serverKey: randomBytes(32),
          }
        : verifierOf(password);
  }

  /** The mechanisms to offer, best first. */
  mechanisms(): string[] {
    return this.channelBinding ? [SCRAM_PLUS, SCRAM] : [SCRAM];
  }

  /** Takes the client-first message of `mechanism`; returns the server-first message. */
  first(mechanism: string, clientFirst: string): string {
    if (!this.mechanisms().includes(mechanism))
      throw new ScramError(`client selected an invalid SASL authentication mechanism`);
    const match = /^([npy])(=[^,]*)?,([^,]*),(.*)$/.exec(clientFirst);
    if (!match) throw new ScramError("malformed SCRAM message");
    const [, flag, cbName, , bare] = match;
    if (mechanism === SCRAM_PLUS) {
      if (flag !== "p" || cbName !== "=tls-server-end-point")
        throw new ScramError("unsupported SCRAM channel-binding type");
    } else if (flag === "p") {
      throw new ScramError("malformed SCRAM message: channel binding requested without SCRAM-SHA-256-PLUS");
    } else if (flag === "y" && this.channelBinding) {
      // The client could have used channel binding and was told it could not: a downgrade.
      throw new ScramError("SCRAM channel binding negotiation error");
    }
    const clientNonce = attributes(bare as string).get("r");
    if (!clientNonce) throw new ScramError("malformed SCRAM message: no nonce");
    this.gs2Header = clientFirst.slice(0, clientFirst.length - (bare as string).length);
    this.clientFirstBare = bare as string;
    this.nonce = clientNonce + randomBytes(18).toString("base64");
    this.serverFirst = `r=${this.nonce},s=${this.verifier.salt.toString("base64")},i=${this.verifier.iterations}`;
    return this.serverFirst;
  }

  /** Takes the client-final message; returns the server-final message, or throws when the proof is wrong. */
  final(clientFinal: string): string {
    const attrs = attributes(clientFinal);
    const proofAt = clientFinal.lastIndexOf(",p=");
    const proof = attrs.get("p");
    if (proofAt < 0 || !proof || attrs.get("r") !== this.nonce)
      throw new ScramError("malformed SCRAM message");
    const binding = Buffer.concat([
      Buffer.from(this.gs2Header),
      this.gs2Header.startsWith("p") && this.channelBinding ? this.channelBinding : Buffer.alloc(0),
    ]);
    if (attrs.get("c") !== binding.toString("base64"))
      throw new ScramError("SCRAM channel binding check failed");
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${clientFinal.slice(0, proofAt)}`;
    const clientKey = xor(Buffer.from(proof, "base64"), hmac(this.verifier.storedKey, authMessage));
    const computed = sha256(clientKey);
    if (
      computed.length !== this.verifier.storedKey.length ||
      !timingSafeEqual(computed, this.verifier.storedKey)
    )
      throw new WrongPassword();
    return `v=${hmac(this.verifier.serverKey, authMessage).toString("base64")}`;
  }
}

/** The client's proof did not match the role's password. */
export class WrongPassword extends ScramError {
  constructor() {
    super("password authentication failed");
  }
}

/** The client side of one exchange, without channel binding (the compute is reached on loopback). */
export class ScramClient {
  private readonly clientFirstBare: string;
  private readonly nonce = randomBytes(18).toString("base64");
  private serverSignature: Buffer | undefined;

  constructor(private readonly password: string) {
    this.clientFirstBare = `n=,r=${this.nonce}`;
  }

  first(): string {
    return `n,,${this.clientFirstBare}`;
  }

  /** Takes the server-first message; returns the client-final one. */
  final(serverFirst: string): string {
    const attrs = attributes(serverFirst);
    const nonce = attrs.get("r");
    const salt = attrs.get("s");
    const iterations = Number(attrs.get("i"));
    if (!nonce?.startsWith(this.nonce) || !salt || !Number.isInteger(iterations) || iterations < 1)
      throw new ScramError("malformed SCRAM message from the compute");
    const sp = saltedPassword(this.password, Buffer.from(salt, "base64"), iterations);
    const withoutProof = `c=biws,r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const clientKey = hmac(sp, "Client Key");
    this.serverSignature = hmac(hmac(sp, "Server Key"), authMessage);
    const proof = xor(clientKey, hmac(sha256(clientKey), authMessage));
    return `${withoutProof},p=${proof.toString("base64")}`;
  }

  /** Checks the server-final message: the compute knows the password too. */
  verify(serverFinal: string): void {
    const v = attributes(serverFinal).get("v");
    if (!v || !this.serverSignature || !Buffer.from(v, "base64").equals(this.serverSignature))
      throw new ScramError("the compute's SCRAM signature does not match");
  }
}

/** The `tls-server-end-point` channel-binding data of a certificate signed with SHA-256: its hash. */
export function endPointBinding(certificateDer: Buffer): Buffer {
  return sha256(certificateDer);
}
