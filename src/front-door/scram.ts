import { randomBytes, timingSafeEqual } from "node:crypto";
import { hmac, keysOf, type ScramKeys, sha256, type Verifier } from "../platform/scram-verifier.js";

/**
 * SCRAM-SHA-256 (RFC 5802 / 7677) as Postgres speaks it, both ways: the front door is the server
 * to clients (with SCRAM-SHA-256-PLUS channel binding, `tls-server-end-point`, over TLS) and a
 * client to the compute behind it. No library on npm does the server side with channel binding.
 */

export const SCRAM = "SCRAM-SHA-256";
export const SCRAM_PLUS = "SCRAM-SHA-256-PLUS";

export class ScramError extends Error {}

const xor = (a: Buffer, b: Buffer) => Buffer.from(a.map((byte, i) => byte ^ (b[i] ?? 0)));

/** How the front door logs in to a compute as a client's role: its password, or the keys its proof gave. */
export type Credential = { password: string } | { keys: ScramKeys };

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
  /** The client's keys, once its proof matched: what logs in to a server holding the same verifier. */
  keys: ScramKeys | undefined;

  constructor(
    private readonly verifier: Verifier,
    private readonly channelBinding: Buffer | undefined,
  ) {}

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
    this.keys = { clientKey, serverKey: this.verifier.serverKey };
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

  constructor(private readonly credential: Credential) {
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
    const { clientKey, serverKey } =
      "keys" in this.credential
        ? this.credential.keys
        : keysOf(this.credential.password, Buffer.from(salt, "base64"), iterations);
    const withoutProof = `c=biws,r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    this.serverSignature = hmac(serverKey, authMessage);
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
