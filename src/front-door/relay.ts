import net from "node:net";
import type { Duplex } from "node:stream";
import type { ComputeAddress } from "../compute/postgres/driver.js";
import type { Compute, EgressCounter, EgressMeter } from "./egress.js";
import { forwardedOptions, type Target } from "./routing.js";
import { type Credential, SCRAM, ScramClient } from "./scram.js";
import {
  authenticationOk,
  authenticationSaslFinal,
  CANCEL_REQUEST,
  cstring,
  errorFields,
  type Frames,
  saslInitialResponse,
  saslResponse,
  startupMessage,
} from "./wire.js";

/** How long a client whose compute went away may take to close its side. */
const CLOSE_GRACE_MS = 5000;

/** A client that proved it knows the role's password, for an endpoint it may connect to. */
export interface Login {
  target: Target;
  /** What logs in to the compute as the role. */
  credential: Credential;
  /** SCRAM's server-final message, sent once the compute accepted the login too. */
  serverFinal?: string;
  /** The compute's max_connections (a pool's size follows it). */
  maxConnections: number;
  /** The endpoint with its branch and project. */
  compute: Compute;
}

/** Where the relay reads a socket's start-up phase from (session.ts's Inbox). */
export interface MessageSource {
  readonly frames: Frames;
  take<T>(read: (frames: Frames) => T | undefined): Promise<T>;
  detach(): void;
}

/** The compute refused or could not be reached while the front door logged in to it. */
export class ComputeUnreachable extends Error {}

/** The compute answered the login with an error: relayed to the client as it is (e.g. 3D000, 53300). */
export class ComputeRefused extends Error {
  constructor(readonly raw: Buffer) {
    super(errorFields(raw.subarray(5)).M ?? "the compute refused the connection");
  }
}

/** What a CancelRequest carrying a key given to a client does, and the endpoint it is for. */
export interface CancelTarget {
  endpointId: string;
  cancel(): void;
}

export interface RelayHooks {
  /** Where the bytes sent to the client are counted. */
  egress: EgressMeter;
  /** A live relay's backend key data (`live`), or its end: a CancelRequest carrying it goes to its server. */
  cancelKey(key: string, live: boolean): void;
  /** The relay is established (+1) and, later, ended (-1). */
  connected(delta: 1 | -1): void;
}

/** A server session the front door logged in to. */
export interface ComputeSession {
  /** What the server sent after AuthenticationOk, up to and including the first ReadyForQuery. */
  messages: Buffer[];
  /** ParameterStatus values the server reported. */
  parameters: Map<string, string>;
  /** The BackendKeyData (process id and secret) as a key of cancelTargets, and its bytes. */
  cancelKey?: string;
  keyData?: Buffer;
}

/**
 * Logs in to a compute as `startup.user` with the role's password or the keys of the client's
 * proof (SCRAM, as the proxy does) and reads up to its first ReadyForQuery.
 */
export async function logIn(
  backend: net.Socket,
  inbox: MessageSource,
  startup: Record<string, string>,
  credential: Credential,
): Promise<ComputeSession> {
  backend.write(startupMessage(startup));
  const scram = new ScramClient(credential);
  const session: ComputeSession = { messages: [], parameters: new Map() };
  for (let authenticated = false; ; ) {
    const message = await inbox.take((f) => f.typed(1 << 24));
    if (message.type === "E") throw new ComputeRefused(message.raw);
    if (!authenticated) {
      if (message.type !== "R")
        throw new ComputeUnreachable(`unexpected message ${message.type} during login`);
      const code = message.body.readInt32BE(0);
      const data = message.body.toString("utf8", 4);
      if (code === 10) backend.write(saslInitialResponse(SCRAM, scram.first()));
      else if (code === 11) backend.write(saslResponse(scram.final(data)));
      else if (code === 12) scram.verify(data);
      else if (code === 0) authenticated = true;
      else throw new ComputeUnreachable(`unsupported authentication request ${code} from the compute`);
      continue;
    }
    if (message.type === "K") {
      session.cancelKey = cancelKeyOf(message.body);
      session.keyData = Buffer.from(message.body.subarray(0, 8));
    } else if (message.type === "S") {
      const [name, at] = cstring(message.body, 0);
      session.parameters.set(name, cstring(message.body, at)[0]);
    }
    session.messages.push(message.raw);
    if (message.type === "Z") return session;
  }
}

/** The key of a CancelRequest or BackendKeyData: process id and secret. */
export function cancelKeyOf(pidAndSecret: Buffer): string {
  return pidAndSecret.subarray(0, 8).toString("hex");
}

/**
 * Logs in to the compute on `port` as the client's role (SCRAM with the role's password, as the
 * proxy does with its own credentials), finishes the client's authentication, passes on the
 * compute's ParameterStatus, BackendKeyData and ReadyForQuery, then relays bytes both ways.
 */
export async function relay(
  client: Duplex,
  clientInbox: MessageSource,
  backend: net.Socket,
  backendInbox: MessageSource,
  params: Record<string, string>,
  login: Login,
  hooks: RelayHooks,
): Promise<void> {
  const startup: Record<string, string> = {};
  // Routing options stay at the door (protocol extensions, _pq_.*, never reach it: see serveClient).
  for (const [name, value] of Object.entries(params)) if (name !== "options") startup[name] = value;
  const options = forwardedOptions(params.options);
  if (options) startup.options = options;
  const session = await logIn(backend, backendInbox, startup, login.credential);
  const toClient: Buffer[] = [];
  if (login.serverFinal) toClient.push(authenticationSaslFinal(login.serverFinal));
  toClient.push(authenticationOk(), ...session.messages);
  const cancelKey = session.cancelKey;

  // From here on, bytes. What each side sent past the messages read above goes first.
  const pending = clientInbox.frames.rest();
  const early = backendInbox.frames.rest();
  clientInbox.detach();
  backendInbox.detach();
  client.write(Buffer.concat([...toClient, early]));
  if (pending.length) backend.write(pending);
  if (cancelKey) hooks.cancelKey(cancelKey, true);
  hooks.connected(1);
  const sent = hooks.egress.hold(login.compute);
  sent.bytes += early.length; // the server's bytes past its first ReadyForQuery, sent above
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    client.destroy();
    backend.destroy();
    if (cancelKey) hooks.cancelKey(cancelKey, false);
    hooks.connected(-1);
    hooks.egress.release(sent);
  };
  // A compute that ends (suspended: 57P01 first) ends the client once its last bytes are out; a
  // client that does not close its side in time is dropped.
  backend.once("close", () => {
    if (client.destroyed) return;
    client.end();
    setTimeout(() => client.destroy(), CLOSE_GRACE_MS).unref();
  });
  client.once("end", () => backend.end());
  client.once("close", end);
  if (client.destroyed) end();
  forward(client, backend);
  forward(backend, client, sent);
  client.resume(); // paused by the session while it woke the endpoint
}

/**
 * Bytes from one socket to the other, pausing the reader while the writer's buffer is full, and
 * counted in `sent` when given. (What stream.pipe does, without its per-chunk bookkeeping: this
 * runs for every message.)
 */
function forward(from: Duplex, to: Duplex, sent?: EgressCounter): void {
  const resume = () => from.resume();
  from.on("data", (chunk: Buffer) => {
    if (sent) sent.bytes += chunk.length;
    if (!to.write(chunk)) {
      from.pause();
      to.once("drain", resume);
    }
  });
}

/** How long a cancel's connection may take to be closed by the server before it is given up. */
const CANCEL_SETTLE_MS = 2000;

/**
 * Sends a CancelRequest for the session with this BackendKeyData (process id and secret) to its
 * server. Resolves once the server has closed that connection, which it does after signalling the
 * session (or at once, for a key it does not know), or after CANCEL_SETTLE_MS: a session lent to
 * another client before that could have the other client's query cancelled.
 */
export function sendCancel(address: ComputeAddress, keyData: Buffer): Promise<void> {
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(CANCEL_REQUEST, 4);
  keyData.copy(packet, 8, 0, 8);
  return new Promise((resolve) => {
    const socket = net.connect(address);
    const timer = setTimeout(() => socket.destroy(), CANCEL_SETTLE_MS);
    timer.unref();
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
    socket.end(packet);
  });
}
