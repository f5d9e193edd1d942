import net from "node:net";
import type { Duplex } from "node:stream";
import type tlsTypes from "node:tls";
import type { Logger } from "pino";
import type { ComputeAddress } from "../compute/postgres/driver.js";
import type { LoginTarget } from "../control-plane/endpoints/service.js";
import { sameText } from "../platform/ids.js";
import { plainAddress } from "../platform/peer.js";
import {
  parseVerifier,
  unmatchable,
  type Verifier,
  verifierOf,
  verifies,
} from "../platform/scram-verifier.js";
import type { Compute, EgressMeter } from "./egress.js";
import { ClientGone, Inbox, POSTGRES_ALPN } from "./inbox.js";
import { MAX_CLIENT_CONN, type Pooler, pooledStartup } from "./pooler.js";
import { type CancelTarget, ComputeRefused, cancelKeyOf, type Login, relay, sendCancel } from "./relay.js";
import { fromPassword, RoutingError, routeOf, type Target } from "./routing.js";
import { ScramError, ScramServer, WrongPassword } from "./scram.js";
import { tls } from "./tls.js";
import {
  authenticationCleartextPassword,
  authenticationSasl,
  authenticationSaslContinue,
  CANCEL_REQUEST,
  cstring,
  DoorError,
  errorResponse,
  GSSENC_REQUEST,
  negotiateProtocolVersion,
  type PgErrorFields,
  ProtocolError,
  SSL_REQUEST,
  startupParameters,
} from "./wire.js";

/** The first byte of a TLS handshake record. */
const TLS_HANDSHAKE = 0x16;

/** What the front door asks of the rest of the emulator. */
export interface DoorServices {
  /** The domain endpoint host names end with (TLS server names outside it are ignored). */
  domain: string;
  /** The endpoint (by id) and the password of the role a client logs in as. */
  login(endpointId: string, role: string): LoginTarget;
  /**
   * The role as the endpoint's running server holds it now (`verifier`: its pg_authid password,
   * null for none; null: no such role), or undefined when its server does not run (or did not
   * answer). A role made or a password set with SQL logs in at once, as on Neon, whose computes
   * send such changes to the control plane as they commit.
   */
  serverRole(endpointId: string, role: string): Promise<{ verifier: string | null } | null | undefined>;
  /**
   * Makes sure the endpoint's server runs, waking an idle endpoint (concurrent callers share one
   * wake); resolves to where its server is reached (a Unix socket, or a loopback port).
   */
  ready(endpointId: string): Promise<ComputeAddress>;
  /** A client connection to the endpoint opened (+1) or ended (-1). */
  connected(endpointId: string, delta: 1 | -1): void;
  /** Whether the endpoint's server runs and no stop of it has begun. */
  serving(endpointId: string): boolean;
  /** Ends the client sessions of every running server, which tell their clients so (57P01); at shutdown. */
  endClientSessions(): Promise<void>;
  /** A client's statements ran outside a connection the door counts (SQL over HTTP): they may have changed roles. */
  statementsRan(endpointId: string): void;
  /** Bytes sent to logged-in clients, per endpoint. */
  egress: EgressMeter;
}

export interface SessionContext {
  services: DoorServices;
  secureContext: tlsTypes.SecureContext;
  /** The server certificate's channel-binding data (tls-server-end-point). */
  channelBinding: Buffer;
  /** Backend key data a client was given -> what a CancelRequest carrying it does. */
  cancelTargets: Map<string, CancelTarget>;
  /** How long a client may take over each start-up message. */
  handshakeTimeoutMs: number;
  /**
   * Clients connected and not yet logged in, and how many may be: a client beyond is refused
   * before anything of it is read, so unauthenticated connections hold bounded memory.
   */
  unauthenticated: { count: number; max: number };
  /** Transaction pooling for `-pooler` connections. */
  pooler?: Pooler;
  logger?: Logger;
}

/** The proxy's texts (Neon answers them as ERROR with SQLSTATE XX000). */
export const TEXTS = {
  notFound:
    "The requested endpoint could not be found, or you don't have access to it. Please check the provided ID and try again.",
  disabled: "The endpoint has been disabled. Enable it using the API and retry.",
  /** What the proxy says when the control plane refuses a start for the project's quota (423/422). */
  unavailable:
    "Control plane request failed: endpoint is temporarily unavailable. Check your quotas and/or contact our support.",
  couldNotConnect: "Couldn't connect to compute node",
  ipNotAllowed: (ip: string) =>
    `This IP address ${ip} is not allowed to connect to this endpoint. Please add it to the allowed list in the Neon console. Make sure to check for IPv4 or IPv6 addresses.`,
  blockedNetwork: "This connection is trying to access this endpoint from a blocked network.",
  wrongPassword: (user: string) => `password authentication failed for user '${user}'`,
};

/** How long a client told of a failure may take to close its side before it is dropped. */
const CLOSE_AFTER_ERROR_MS = 2000;

const proxyError = (message: string) => new DoorError({ code: "XX000", message });

/** PgBouncer's answer past max_client_conn (FATAL 08P01). */
class PoolerRefusal extends Error {
  constructor(message = MAX_CLIENT_CONN) {
    super(message);
  }
}

/**
 * What the pooler refuses before authentication, as Neon's PgBouncer (1.22) does: a client beyond
 * max_client_conn, and a startup parameter it does not take (pooledStartup): a replication
 * connection (logical replication goes through a direct connection), a `statement_timeout` or a
 * `-c search_path=…` in `options` (set them with SET, or per role or database). Returns the
 * settings PgBouncer tracks from its startup parameters.
 */
function checkPooled(
  pooler: Pooler,
  endpointId: string,
  params: Record<string, string>,
  /** The settings a check before the login read already. */
  read?: Map<string, string>,
): Map<string, string> {
  if (!pooler.admits(endpointId)) throw new PoolerRefusal();
  if (read) return read;
  const startup = pooledStartup(params);
  if ("refused" in startup) throw new PoolerRefusal(startup.refused);
  return startup.settings;
}

const PHYSICAL_REPLICATION =
  "physical replication connections are not supported; logical replication connects with replication=database";

/**
 * A physical replication connection (`replication=true`, as pg_basebackup and pg_receivewal ask):
 * refused, as Neon offers logical replication alone (`replication=database`). It would stream a
 * compute's whole folder to any role with REPLICATION (every role the API makes has it).
 */
function physicalReplication(value: string | undefined): boolean {
  // Postgres' boolean: on, 1, or any start of true or yes.
  const v = value?.trim().toLowerCase();
  return v === "on" || v === "1" || (!!v && ("true".startsWith(v) || "yes".startsWith(v)));
}

/** How a client reached the front door. */
export interface Transport {
  /**
   * A WebSocket tunnel (the serverless driver's): encrypted by the tunnel when it is wss, so no TLS
   * inside it, and logins take a cleartext password (as Neon's proxy asks over WebSockets).
   */
  websocket: boolean;
  /** The host name the client asked for (a WebSocket's Host or `address`), read as a TLS server name. */
  serverName?: string;
  /** The client's address, when the stream is not the client's own socket (a WebSocket's). */
  peer?: string;
  /** Called once the client logged in (a tunnel then takes larger messages). */
  loggedIn?: () => void;
}

const TCP: Transport = { websocket: false };

/**
 * One client connection: SSL negotiation, start-up, routing, authentication against the
 * control plane's role, waking the endpoint, authenticating to its server, then relaying bytes
 * both ways until either side ends.
 */
export async function serveClient(socket: Duplex, ctx: SessionContext, transport = TCP): Promise<void> {
  if (socket instanceof net.Socket) socket.setNoDelay(true);
  socket.on("error", () => {}); // a vanished client ends through 'close'
  const peer = transport.peer ?? (socket instanceof net.Socket ? socket.remoteAddress : undefined);
  if (ctx.unauthenticated.count >= ctx.unauthenticated.max) {
    socket.end(
      errorResponse({ severity: "FATAL", code: "53300", message: "sorry, too many clients already" }),
    );
    setTimeout(() => socket.destroy(), CLOSE_AFTER_ERROR_MS).unref();
    return;
  }
  ctx.unauthenticated.count++;
  let authenticating = true;
  const authenticated = () => {
    if (!authenticating) return;
    authenticating = false;
    ctx.unauthenticated.count--;
  };
  socket.once("close", authenticated);
  const inbox = new Inbox(socket, ctx.handshakeTimeoutMs);
  let client: Duplex = socket;
  let backend: net.Socket | undefined;
  /** Sends a last message and closes; a client that does not close its side is dropped soon after. */
  const finish = (last: Buffer) => {
    if (client.destroyed) return;
    client.end(last);
    const c = client;
    setTimeout(() => c.destroy(), CLOSE_AFTER_ERROR_MS).unref();
  };
  // The proxy answers its own failures with severity ERROR (protocol violations: FATAL).
  const fail = (fields: PgErrorFields) => finish(errorResponse(fields));
  try {
    let params: Record<string, string> | undefined;
    let gssenc = false;
    while (!params) {
      // A TLS handshake first (libpq 17's sslnegotiation=direct): TLS at once, as Postgres 17 and
      // Neon's proxy take it.
      if (
        client === socket &&
        !transport.websocket &&
        (await inbox.take((f) => f.first())) === TLS_HANDSHAKE
      ) {
        const secure = await inbox.upgrade(ctx.secureContext, true);
        client = secure;
        // As Postgres 17 refuses it (its answer goes through TLS).
        if (secure.alpnProtocol !== POSTGRES_ALPN)
          throw new ProtocolError(
            "direct SSL connection was established without ALPN protocol negotiation extension",
          );
        continue;
      }
      const body = await inbox.take((f) => f.untyped());
      const code = body.length >= 4 ? body.readInt32BE(0) : 0;
      if (code === SSL_REQUEST) {
        if (client !== socket) throw new ProtocolError("SSLRequest received on a TLS connection");
        if (transport.websocket) {
          socket.write("N"); // the tunnel is the encryption
          continue;
        }
        socket.write("S");
        client = await inbox.upgrade(ctx.secureContext);
      } else if (code === GSSENC_REQUEST) {
        if (gssenc || client !== socket) throw new ProtocolError("unexpected GSSENCRequest");
        gssenc = true;
        client.write("N");
      } else if (code === CANCEL_REQUEST) {
        const target = body.length >= 12 ? ctx.cancelTargets.get(cancelKeyOf(body.subarray(4))) : undefined;
        // The project's network settings hold for cancels too (the proxy checks them first).
        const found = target && ctx.services.login(target.endpointId, "");
        if (target && found?.found && !networkRefusal(found, peer)) target.cancel();
        client.destroy();
        return;
      } else if (code >> 16 === 3) {
        params = startupParameters(body);
        // As Postgres and Neon's proxy answer a newer minor version of the protocol (libpq 18's 3.2)
        // or protocol options (_pq_.*): with the version spoken (3.0) and the options not taken, which go.
        const extensions = Object.keys(params).filter((name) => name.startsWith("_pq_."));
        if ((code & 0xffff) > 0 || extensions.length) {
          client.write(negotiateProtocolVersion(0, extensions));
          for (const name of extensions) delete params[name];
        }
      } else {
        throw new DoorError({
          code: "0A000",
          message: `unsupported frontend protocol ${code >> 16}.${code & 0xffff}: server supports 3.0 to 3.0`,
        });
      }
    }
    const user = params.user;
    if (!user)
      throw new DoorError({ code: "28000", message: "no PostgreSQL user name specified in startup packet" });
    if (physicalReplication(params.replication))
      throw new DoorError({ code: "0A000", message: PHYSICAL_REPLICATION });
    const serverName =
      transport.serverName ??
      (client instanceof tls().TLSSocket ? client.servername || undefined : undefined);
    const routed = routeOf(params, serverName, ctx.services.domain);
    const pooledSettings =
      routed?.pooled && ctx.pooler ? checkPooled(ctx.pooler, routed.endpointId, params) : undefined;
    const login = !routed
      ? await passwordLogin(inbox, client, user, ctx, peer)
      : transport.websocket
        ? await cleartextLogin(inbox, client, routed, user, ctx, peer)
        : await scramLogin(inbox, client, routed, user, ctx, peer);
    authenticated();
    transport.loggedIn?.();
    // Nothing more is read from the client until the relay starts (its bytes wait in the kernel).
    client.pause();
    if (login.target.pooled && ctx.pooler) {
      // Admitted again (clients came meanwhile); the parameters read once, before the login when
      // the route named the pooler, else now (the password named it).
      const settings = checkPooled(ctx.pooler, login.target.endpointId, params, pooledSettings);
      await ctx.pooler
        .serve(client, inbox, params, settings, login, ctx.cancelTargets)
        .catch((err: unknown) => {
          if (err instanceof ComputeRefused || err instanceof DoorError) throw err;
          ctx.logger?.warn({ err, endpoint: login.target.endpointId }, "front door: pooled login failed");
          throw proxyError(TEXTS.couldNotConnect);
        });
      return;
    }
    const address = await ctx.services.ready(login.target.endpointId).catch((err: unknown) => {
      if (!(err instanceof DoorError))
        ctx.logger?.warn({ err, endpoint: login.target.endpointId }, "front door: wake failed");
      throw err instanceof DoorError ? err : proxyError(TEXTS.couldNotConnect);
    });
    backend = net.connect(address);
    if ("port" in address) backend.setNoDelay(true);
    backend.on("error", () => {}); // ends through 'close'
    const endpointId = login.target.endpointId;
    await relay(client, inbox, backend, new Inbox(backend, ctx.handshakeTimeoutMs), params, login, {
      egress: ctx.services.egress,
      cancelKey: (key, live) =>
        live
          ? ctx.cancelTargets.set(key, {
              endpointId,
              cancel: () => void sendCancel(address, Buffer.from(key, "hex")),
            })
          : ctx.cancelTargets.delete(key),
      connected: (delta) => {
        try {
          ctx.services.connected(endpointId, delta);
        } catch (err) {
          // The count is activity bookkeeping: a busy or failing database must not end the relay or the process.
          ctx.logger?.error({ err, endpoint: endpointId }, "front door: could not record a connection");
        }
      },
    }).catch((err: unknown) => {
      if (err instanceof ComputeRefused) throw err;
      if (err instanceof ClientGone && client.destroyed) throw err;
      if (!(err instanceof ClientGone))
        ctx.logger?.warn({ err, endpoint: endpointId }, "front door: login to the compute failed");
      throw proxyError(TEXTS.couldNotConnect);
    });
  } catch (err) {
    inbox.detach();
    backend?.destroy();
    if (err instanceof ComputeRefused) {
      finish(err.raw);
      return;
    }
    if (err instanceof DoorError) fail(err.fields);
    else if (err instanceof RoutingError) fail({ code: "XX000", message: err.message });
    else if (err instanceof ProtocolError || err instanceof PoolerRefusal)
      fail({ severity: "FATAL", code: "08P01", message: err.message });
    else if (err instanceof ClientGone) client.destroy();
    else {
      ctx.logger?.error({ err }, "front door: unexpected failure");
      fail({ code: "XX000", message: TEXTS.couldNotConnect });
    }
  }
}

/**
 * The endpoint must exist, and let the client's address in, before the client is asked for a
 * password (the proxy's order).
 */
function lookUp(
  target: Target,
  user: string,
  ctx: SessionContext,
  peer: string | undefined,
): Extract<LoginTarget, { found: true }> {
  const found = ctx.services.login(target.endpointId, user);
  if (!found.found) throw proxyError(TEXTS.notFound);
  const refusal = networkRefusal(found, peer);
  if (refusal) throw proxyError(refusal);
  return found;
}

/**
 * What the proxy says to a client the project's network settings keep out: an address its IP
 * allow list does not hold, then any client while `block_public_connections` is set (every client
 * of the emulator comes from the public network: it has no private networking). Undefined when
 * the client may go on; a client with no address (in-process requests) meets the second rule only.
 */
export function networkRefusal(
  found: Extract<LoginTarget, { found: true }>,
  peer: string | undefined,
): string | undefined {
  if (peer && !found.allows(peer)) return TEXTS.ipNotAllowed(plainAddress(peer));
  if (found.publicBlocked) return TEXTS.blockedNetwork;
  return undefined;
}

function afterLogin(found: Extract<LoginTarget, { found: true }>): void {
  if (found.disabled) throw proxyError(TEXTS.disabled);
}

/** SCRAM-SHA-256, with channel binding (SCRAM-SHA-256-PLUS) offered over TLS. */
async function scramLogin(
  inbox: Inbox,
  client: Duplex,
  target: Target,
  user: string,
  ctx: SessionContext,
  peer: string | undefined,
): Promise<Login> {
  const found = lookUp(target, user, ctx, peer);
  // The running server's verifier, else the control plane's (a password set with SQL, as the
  // server held it when last read), else one made from the control plane's password.
  const live = await ctx.services.serverRole(target.endpointId, user).catch(() => undefined);
  let verifier: Verifier | undefined;
  // The password the client proves, when the control plane knows it: the front door logs in to
  // the server with it (any server of the branch takes it, also one a restore is about to start
  // on new data); else with the keys the client's proof gives, as Neon's proxy does.
  let password: string | null = null;
  if (live !== undefined) {
    verifier = parseVerifier(live?.verifier);
    if (verifier && found.password !== null && verifies(verifier, found.password)) password = found.password;
  } else if (found.verifier !== null) verifier = parseVerifier(found.verifier);
  else if (found.password !== null) {
    verifier = verifierOf(found.password);
    password = found.password;
  }
  // A role that does not exist goes through the same exchange (with a verifier nothing matches)
  // and fails at the end, as in Postgres.
  const scram = new ScramServer(
    verifier ?? unmatchable(),
    client instanceof tls().TLSSocket ? ctx.channelBinding : undefined,
  );
  client.write(authenticationSasl(scram.mechanisms()));
  try {
    const initial = await inbox.password();
    const [mechanism, at] = cstring(initial, 0);
    if (initial.length < at + 4) throw new ProtocolError("malformed SASLInitialResponse");
    const length = initial.readInt32BE(at);
    const clientFirst = length < 0 ? "" : initial.toString("utf8", at + 4, at + 4 + length);
    client.write(authenticationSaslContinue(scram.first(mechanism, clientFirst)));
    const serverFinal = scram.final((await inbox.password()).toString("utf8"));
    if (!verifier || !scram.keys) throw new WrongPassword();
    afterLogin(found);
    return {
      target,
      credential: password !== null ? { password } : { keys: scram.keys },
      serverFinal,
      maxConnections: found.maxConnections,
      compute: computeOf(target, found),
    };
  } catch (err) {
    if (err instanceof WrongPassword)
      throw new DoorError({ code: "28P01", message: TEXTS.wrongPassword(user) });
    if (err instanceof ScramError) throw new DoorError({ code: "28000", message: err.message });
    throw err;
  }
}

/** No endpoint named by options or server name: the password carries it (`endpoint=<id>;<password>`). */
async function passwordLogin(
  inbox: Inbox,
  client: Duplex,
  user: string,
  ctx: SessionContext,
  peer: string | undefined,
): Promise<Login> {
  client.write(authenticationCleartextPassword());
  const [given] = cstring(await inbox.password(), 0);
  const { target, password } = fromPassword(given);
  return checkPassword(lookUp(target, user, ctx, peer), target, user, password, ctx.services);
}

/**
 * A cleartext password for an endpoint already named (WebSocket tunnels). The serverless driver
 * sends it before it is asked (`pipelineConnect: "password"`): it is then already in the inbox.
 */
async function cleartextLogin(
  inbox: Inbox,
  client: Duplex,
  target: Target,
  user: string,
  ctx: SessionContext,
  peer: string | undefined,
): Promise<Login> {
  const found = lookUp(target, user, ctx, peer);
  client.write(authenticationCleartextPassword());
  const [given] = cstring(await inbox.password(), 0);
  return checkPassword(found, target, user, given, ctx.services);
}

async function checkPassword(
  found: Extract<LoginTarget, { found: true }>,
  target: Target,
  user: string,
  password: string,
  services: DoorServices,
): Promise<Login> {
  if (!(await passwordHolds(services, found, target.endpointId, user, password)))
    throw new DoorError({ code: "28P01", message: TEXTS.wrongPassword(user) });
  afterLogin(found);
  return {
    target,
    credential: { password },
    maxConnections: found.maxConnections,
    compute: computeOf(target, found),
  };
}

/**
 * Whether a cleartext password is the role's: the control plane's password (read with the
 * endpoint: SQL over HTTP checks one per query, and asking the server each time cost a third of
 * its throughput), else the running server's verifier (a password set with SQL holds at once), or
 * the control plane's copy of it. A password SQL replaced goes on passing here until the control
 * plane takes the change (the second after the statements that made it).
 */
export async function passwordHolds(
  services: DoorServices,
  found: Extract<LoginTarget, { found: true }>,
  endpointId: string,
  user: string,
  password: string,
): Promise<boolean> {
  if (found.password !== null && sameText(found.password, password)) return true;
  const live = await services.serverRole(endpointId, user).catch(() => undefined);
  const verifier = parseVerifier(live !== undefined ? live?.verifier : found.verifier);
  return verifier !== undefined && verifies(verifier, password);
}

/** The endpoint a login is for, with its branch and project (what its traffic is metered under). */
function computeOf(target: Target, found: Extract<LoginTarget, { found: true }>): Compute {
  return { endpointId: target.endpointId, branchId: found.branchId, projectId: found.projectId };
}
