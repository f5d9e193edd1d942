import { constants, generateKeyPair, privateEncrypt, X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type forgeModule from "node-forge";
import { wallNow } from "../platform/clock.js";
import { requireFromPackage } from "../platform/package-root.js";

/**
 * The front door's TLS identity: a certificate authority made at first start and kept (its
 * certificate is what clients trust: `GET /_emulator/ca.pem`, and a copy beside the database),
 * and a server certificate it signs for every endpoint host name (`*.<region>.<domain>` of each
 * region), `localhost` and the loopback addresses. The server certificate is made again when the
 * names it must cover change (another NEON_EMULATOR_DOMAIN); the authority stays.
 */
export interface TlsIdentity {
  key: string;
  cert: string;
  caCert: string;
  /** The server certificate in DER, for SCRAM channel binding (tls-server-end-point). */
  certDer: Buffer;
}

const DAY = 86_400_000;

const generateKeyPairAsync = promisify(generateKeyPair);

function forge(): typeof forgeModule {
  // Loaded at run time: only a first start (or a new domain) needs it, and the start-up snapshot need not hold it.
  return requireFromPackage()("node-forge") as typeof forgeModule;
}

/** An RSA key pair, made off the main thread (two are made side by side at a first start). */
async function newKey(): Promise<{ publicKey: forgeModule.pki.rsa.PublicKey; pem: string }> {
  const { publicKey, privateKey } = await generateKeyPairAsync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });
  return {
    publicKey: forge().pki.publicKeyFromPem(publicKey) as forgeModule.pki.rsa.PublicKey,
    pem: privateKey,
  };
}

/** The DER prefix of a SHA-256 DigestInfo (RFC 8017, 9.2): what an RSASSA-PKCS1-v1_5 signature pads and signs. */
const SHA256_DIGEST_INFO = Buffer.from("3031300d060960864801650304020105000420", "hex");

/**
 * A signer for forge's `cert.sign`, which hands it the TBS certificate's SHA-256 digest: the RSA
 * operation is Node's (OpenSSL), not forge's JavaScript big numbers (55–125 ms a signature here).
 */
function nativeSigner(pem: string): forgeModule.pki.rsa.PrivateKey {
  const sign = (md: forgeModule.md.MessageDigest) =>
    privateEncrypt(
      { key: pem, padding: constants.RSA_PKCS1_PADDING },
      Buffer.concat([SHA256_DIGEST_INFO, Buffer.from(md.digest().getBytes(), "binary")]),
    ).toString("binary");
  return { sign } as unknown as forgeModule.pki.rsa.PrivateKey;
}

function serial(): string {
  // A positive 16-byte serial number.
  return `01${forge().util.bytesToHex(forge().random.getBytesSync(15))}`;
}

function makeAuthority({ publicKey, pem }: Awaited<ReturnType<typeof newKey>>): {
  key: string;
  cert: string;
} {
  const f = forge();
  const cert = f.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(wallNow() - DAY);
  cert.validity.notAfter = new Date(wallNow() + 3650 * DAY);
  const subject = [
    { name: "commonName", value: "neon-emulator local CA" },
    { name: "organizationName", value: "neon-emulator" },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(nativeSigner(pem), f.md.sha256.create());
  return { key: pem, cert: f.pki.certificateToPem(cert) };
}

function makeServerCert(
  ca: { key: string; cert: string },
  names: readonly string[],
  { publicKey, pem }: Awaited<ReturnType<typeof newKey>>,
): { key: string; cert: string } {
  const f = forge();
  const caCert = f.pki.certificateFromPem(ca.cert);
  const cert = f.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(wallNow() - DAY);
  cert.validity.notAfter = new Date(wallNow() + 825 * DAY);
  cert.setSubject([{ name: "commonName", value: names[0] ?? "localhost" }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: [
        ...names.map((value) => ({ type: 2, value })),
        { type: 7, ip: "127.0.0.1" },
        { type: 7, ip: "::1" },
      ],
    },
  ]);
  cert.sign(nativeSigner(ca.key), f.md.sha256.create());
  return { key: pem, cert: f.pki.certificateToPem(cert) };
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** Writes a file whole or not at all (a crash mid-write leaves the old one). */
function writeAtomically(file: string, text: string, mode: number): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text, { mode });
  fs.renameSync(tmp, file);
}

/**
 * Loads the identity kept in `dir` (tls/ of the data folder), making what is missing; the CA
 * certificate is also written to `caCopy`.
 */
export async function loadTlsIdentity(
  dir: string,
  hostNames: readonly string[],
  caCopy: string,
): Promise<TlsIdentity> {
  // The folders above stay passable (the data folder's servers run as another user when root).
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o711 });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = {
    caKey: path.join(dir, "ca-key.pem"),
    caCert: path.join(dir, "ca.pem"),
    key: path.join(dir, "server-key.pem"),
    cert: path.join(dir, "server.pem"),
  };
  let ca = { key: readIfExists(files.caKey), cert: readIfExists(files.caCert) };
  let server = { key: readIfExists(files.key), cert: readIfExists(files.cert) };
  const newAuthority = !ca.key || !ca.cert;
  const newServer =
    newAuthority || !server.key || !server.cert || !covers(server.cert, ca.cert as string, hostNames);
  // The keys a first start needs are made at once, side by side (RSA key generation is the slow part).
  const [caKey, serverKey] = await Promise.all([
    newAuthority ? newKey() : undefined,
    newServer ? newKey() : undefined,
  ]);
  if (caKey) {
    const made = makeAuthority(caKey);
    writeAtomically(files.caKey, made.key, 0o600);
    writeAtomically(files.caCert, made.cert, 0o600);
    ca = made;
  }
  const authority = { key: ca.key as string, cert: ca.cert as string };
  if (serverKey) {
    const made = makeServerCert(authority, hostNames, serverKey);
    writeAtomically(files.key, made.key, 0o600);
    writeAtomically(files.cert, made.cert, 0o600);
    server = made;
  }
  if (readIfExists(caCopy) !== authority.cert) {
    fs.mkdirSync(path.dirname(caCopy), { recursive: true });
    writeAtomically(caCopy, authority.cert, 0o644);
  }
  const cert = server.cert as string;
  return { key: server.key as string, cert, caCert: authority.cert, certDer: new X509Certificate(cert).raw };
}

/** Whether a kept server certificate is still good: signed by the CA, valid for a month more, naming every host. */
function covers(certPem: string, caPem: string, hostNames: readonly string[]): boolean {
  try {
    const cert = new X509Certificate(certPem);
    if (!cert.verify(new X509Certificate(caPem).publicKey)) return false;
    if (Date.parse(cert.validTo) < wallNow() + 30 * DAY) return false;
    const sans = new Set((cert.subjectAltName ?? "").split(", ").map((s) => s.replace(/^DNS:/, "")));
    return hostNames.every((name) => sans.has(name));
  } catch {
    return false;
  }
}
