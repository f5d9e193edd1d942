import { createHash, randomBytes } from "node:crypto";
import net from "node:net";
import os from "node:os";
import type { Duplex } from "node:stream";
import type { ComputeAddress } from "../compute/postgres/driver.js";
import { wallNow } from "../platform/clock.js";
import type { EgressCounter, EgressMeter } from "./egress.js";
import { Inbox } from "./inbox.js";
import {
  type CancelTarget,
  ComputeRefused,
  cancelKeyOf,
  type Login,
  logIn,
  type MessageSource,
  sendCancel,
} from "./relay.js";
import { computeOptionTokens } from "./routing.js";
import type { Credential } from "./scram.js";
import {
  authenticationOk,
  authenticationSaslFinal,
  backendKeyData,
  cstring,
  DoorError,
  errorFields,
  errorResponse,
  message,
  ProtocolError,
  parameterStatus,
  query,
  readyForQuery,
  TERMINATED_TEXT,
  terminate,
} from "./wire.js";

/**
 * Transaction pooling for `-pooler` connections, as Neon's PgBouncer does it (pool_mode=transaction,
 * max_client_conn=10000, default_pool_size=0.9 × max_connections, query_wait_timeout=120): the
 * front door answers a pooled client's login itself, and each of its transactions borrows a server
 * session of the pool for its database and role, which returns to the pool at the transaction's
 * end (ReadyForQuery idle). The startup parameters PgBouncer tracks follow the client from server
 * to server (a SET before its first statement when the borrowed session differs), and so do its
 * protocol-level named prepared statements (max_prepared_statements: prepared again, under the
 * pool's own names, on each session that runs them); everything else a session holds (other SET,
 * LISTEN, session advisory locks, SQL-level PREPARE, temporary tables kept across transactions)
 * stays with the server session, as with PgBouncer. Pooler errors are PgBouncer's: FATAL 08P01,
 * then the connection closes.
 */

export interface PoolerServices {
  /** Where the endpoint's server is reached, waking it if needed. */
  ready(endpointId: string): Promise<ComputeAddress>;
  /** A client connection to the endpoint opened (+1) or ended (-1). */
  connected(endpointId: string, delta: 1 | -1): void;
  /** Whether the endpoint's server runs and no stop of it has begun. */
  serving(endpointId: string): boolean;
  /** Bytes sent to logged-in clients, per endpoint. */
  egress: EgressMeter;
}

export interface PoolerOptions {
  /** Pooled clients per endpoint (PgBouncer's max_client_conn). */
  maxClients: number;
  /** How long a client waits for a server session before it is dropped (query_wait_timeout). */
  queryWaitMs: number;
  /** How long a server session may stay idle in its pool before it is closed (server_idle_timeout). */
  serverIdleMs: number;
  /** How long a login to the compute may take. */
  loginTimeoutMs: number;
}

export const POOLER_DEFAULTS: PoolerOptions = {
  maxClients: 10_000,
  queryWaitMs: 120_000,
  serverIdleMs: 600_000,
  loginTimeoutMs: 10_000,
};

/** Startup parameters PgBouncer keeps per client and re-applies on each server session it lends. */
const TRACKED = [
  "client_encoding",
  "DateStyle",
  "TimeZone",
  "standard_conforming_strings",
  "application_name",
  "IntervalStyle",
];

/**
 * A pooled client's startup parameters as Neon's PgBouncer (1.22, `ignore_startup_parameters=
 * extra_float_digits`) takes them: the tracked settings, given as parameters or in `options` as
 * `-c name=value` / `--name=value` (the proxy's routing tokens left out), with `extra_float_digits`
 * ignored; any other parameter refuses the connection, in PgBouncer's words (FATAL 08P01).
 */
export function pooledStartup(
  params: Record<string, string>,
): { settings: Map<string, string> } | { refused: string } {
  const settings = new Map<string, string>();
  /** Takes one name=value, or says why not. */
  const take = (name: string, value: string, where: string): string | undefined => {
    const tracked = TRACKED.find((t) => t.toLowerCase() === name.toLowerCase());
    if (tracked) settings.set(tracked, value);
    else if (name.toLowerCase() !== "extra_float_digits")
      return `unsupported startup parameter${where}: ${name}`;
    return undefined;
  };
  for (const [name, value] of Object.entries(params)) {
    if (name === "user" || name === "database") continue;
    if (name !== "options") {
      const refused = take(name, value, "");
      if (refused) return { refused };
      continue;
    }
    const args = computeOptionTokens(value);
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as string;
      const setting =
        arg === "-c"
          ? args[++i]
          : arg.startsWith("-c")
            ? arg.slice(2)
            : arg.startsWith("--")
              ? arg.slice(2)
              : undefined;
      if (setting === undefined)
        return {
          refused:
            "unsupported options startup parameter: only '-c config=val' and '--config=val' are allowed",
        };
      const equals = setting.indexOf("=");
      if (equals <= 0)
        return { refused: "unsupported options startup parameter: parameter must be of the form key=value" };
      const refused = take(setting.slice(0, equals), setting.slice(equals + 1), " in options");
      if (refused) return { refused };
    }
  }
  return { settings };
}

/** What a server's own end of a session says (pg_terminate_backend, a fast shutdown): a client ended with it hears the same. */
const TERMINATED = errorResponse({ severity: "FATAL", code: "57P01", message: TERMINATED_TEXT });

/** How long a session its client left may take to finish what the client sent and come back clean. */
const ABANDON_MS = 5000;

/**
 * Server sessions a pool opens as soon as a client waits for one: two per core. Past them, a pool
 * opens a session for a waiting client only while others are held by long transactions (the same
 * one for HELD_MS and more), up to its size. PgBouncer opens one whenever a client waits; on a
 * machine of a few cores, a hundred busy backends answering short transactions each cost Postgres
 * about twice the CPU per query that a few do (the pooler figure of BENCHMARKS.md).
 */
const EAGER_SESSIONS = Math.max(4, 2 * os.availableParallelism());
const HELD_MS = 10;
/** How long a pool with sessions waits to open another after a login to the compute failed. */
const OPEN_RETRY_MS = 1000;

const Z = 0x5a; // ReadyForQuery
const S = 0x53; // ParameterStatus (server) / Sync (client)
const E = 0x45; // ErrorResponse
const Q = 0x51; // Query
const F = 0x46; // FunctionCall
const X = 0x58; // Terminate
const EXECUTE = 0x45; // 'E' (client; ErrorResponse from the server)
const COPY_DATA = 0x64; // 'd'
const COPY_DONE = 0x63; // 'c'
const COPY_FAIL = 0x66; // 'f'
const COPY_IN_RESPONSE = 0x47; // 'G'
const IDLE = 0x49; // 'I'
const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const DESCRIBE = 0x44; // 'D'
const CLOSE = 0x43; // 'C' (client) / CommandComplete (server)
const COMMAND_COMPLETE = 0x43;
const PARSE_COMPLETE = 0x31; // '1'
const CLOSE_COMPLETE = 0x33; // '3'
/** Postgres' own limit on a message (PQ_LARGE_MESSAGE_LIMIT): what the framer may hold back. */
const MAX_MESSAGE_BYTES = 0x3fffffff;
/** How much of a message's body the framer reads to tell whether it must hold it whole (a Bind's portal name included). */
const PEEK_BYTES = 128;
/**
 * A client waiting for a session is lent one once its first message is whole, or once this much of
 * it came (larger messages stream through, as past PgBouncer's packet buffer): a client that sends
 * a few bytes and stops holds no server session.
 */
const STREAM_AFTER_BYTES = 8192;
/** A statement name no session has: closing it answers CloseComplete and changes nothing. */
const CLOSED_NAME = "PGBOUNCER_CLOSED";
/**
 * Statements a server session keeps prepared (Neon's PgBouncer max_prepared_statements): past it,
 * the one used least recently is closed there (prepared again when a client next uses it).
 */
const MAX_PREPARED_STATEMENTS = 1000;

const poolerError = (message: string) => errorResponse({ severity: "FATAL", code: "08P01", message });
export const MAX_CLIENT_CONN = "no more connections allowed (max_client_conn)";

/**
 * Cuts a byte stream into Postgres messages as it arrives. Messages `whole` names (from their type
 * and the start of their body, at most PEEK_BYTES of it; undefined: too little of it came to tell)
 * are handed over complete (held back until they are) and may be replaced: `onWhole` puts what goes
 * instead into `instead` and returns true, or returns false to send the message as it came. The
 * others pass through in pieces as their bytes arrive (their type is still reported). `push`
 * returns what to send on: in the common case, where nothing is replaced, the chunk itself.
 */
class Framer {
  /**
   * The start of a message held back whole (or of a header), in the chunks it came in: joined once
   * `need` bytes are there, not at every chunk (a 32 MB Parse in 64 KiB chunks was quadratic).
   */
  private carry: Buffer[] = [];
  private carried = 0;
  private need = 0;
  private left = 0;

  constructor(
    private readonly whole: (type: number, head: Buffer) => boolean | undefined,
    private readonly onPassing: (type: number) => void,
    private readonly onWhole: (type: number, body: Buffer, instead: Buffer[]) => boolean,
  ) {}

  /** Whether the stream stopped in the middle of a message. */
  get partial(): boolean {
    return this.left > 0 || this.carry.length > 0;
  }

  /** Whether part of a message went on and the rest has not come. */
  get midMessage(): boolean {
    return this.left > 0;
  }

  /** The start of a message held back (nothing of it went on), taken out of the framer. */
  takeHeld(): Buffer[] {
    const held = this.carry;
    this.carry = [];
    this.carried = 0;
    this.need = 0;
    return held;
  }

  push(chunk: Buffer): Buffer[] {
    let data = chunk;
    if (this.carry.length) {
      this.carry.push(chunk);
      this.carried += chunk.length;
      if (this.carried < this.need) return [];
      data = Buffer.concat(this.carry, this.carried);
      this.carry = [];
      this.carried = 0;
    }
    const out: Buffer[] = [];
    let at = Math.min(this.left, data.length);
    this.left -= at;
    let run = 0;
    while (at < data.length) {
      const type = data[at] as number;
      const total = data.length - at >= 5 ? 1 + data.readInt32BE(at + 1) : -1;
      if (total !== -1 && (total < 5 || total > MAX_MESSAGE_BYTES))
        throw new ProtocolError("invalid message length");
      // Whole, or not, as far as the start of its body tells (all it reads of it: whole when that is not enough).
      const peek = total === -1 ? 0 : Math.min(total - 5, PEEK_BYTES);
      const head = data.subarray(at + 5, Math.min(data.length, at + 5 + peek));
      const whole =
        total === -1 ? undefined : (this.whole(type, head) ?? (head.length === peek || undefined));
      if (whole === undefined || (whole && data.length - at < total)) {
        if (at > run) out.push(data.subarray(run, at));
        this.carry = [Buffer.from(data.subarray(at))];
        this.carried = data.length - at;
        this.need = total === -1 ? 5 : whole ? total : 5 + peek;
        return out;
      }
      if (whole) {
        const instead: Buffer[] = [];
        if (this.onWhole(type, data.subarray(at + 5, at + total), instead)) {
          if (at > run) out.push(data.subarray(run, at));
          out.push(...instead);
          run = at + total;
        }
        at += total;
        continue;
      }
      this.onPassing(type);
      if (data.length - at < total) {
        this.left = total - (data.length - at);
        at = data.length;
      } else at += total;
    }
    if (at > run) out.push(data.subarray(run, at));
    return out;
  }
}

/** A ParseComplete or CloseComplete the server owes for a Parse or Close sent to it. */
interface Expected {
  type: number;
  /** Sent by the pooler, not the client: the client does not see its answer. */
  drop: boolean;
  /** ReadyForQuery-producing messages sent before it: it is answered before ReadyForQuery number batch + 1. */
  batch: number;
  /** It was answered (the statement exists now / is closed). */
  done?: () => void;
  /** It was skipped (an error earlier in its batch). */
  skipped?: () => void;
}

/** One server session of a pool. */
class Server {
  client: PooledClient | undefined;
  /** ReadyForQuery messages sent for (Query, Sync, FunctionCall) and received. */
  zSent = 0;
  zSeen = 0;
  status = IDLE;
  idleSince = wallNow();
  /** Lends and returns so far, and their count when the pool last looked for held sessions. */
  turns = 0;
  turnsSeen = -1;
  /** Statements (the pool's names, PGBOUNCER_<hash>) prepared on this session, least recently used first. */
  readonly prepared = new Set<string>();
  readonly expected: Expected[] = [];
  /** While set, the server's messages go here, not to a client (a SET before lending, a ROLLBACK after). */
  private internal: ((type: number, body: Buffer) => void) | undefined;
  private lastError: Buffer | undefined;
  private readonly framer: Framer;
  private releaseNow = false;
  /** The client whose full buffer stopped the reading of this session, until it drains. */
  private waitingOn: Duplex | undefined;
  private readonly drained = () => this.unblock();

  constructor(
    readonly pool: Pool,
    readonly socket: net.Socket,
    readonly address: ComputeAddress,
    readonly parameters: Map<string, string>,
    readonly keyData: Buffer | undefined,
  ) {
    this.framer = new Framer(
      (t) =>
        t === Z ||
        t === S ||
        t === E ||
        t === PARSE_COMPLETE ||
        t === CLOSE_COMPLETE ||
        t === COMMAND_COMPLETE ||
        t === COPY_IN_RESPONSE,
      () => {},
      (type, body) => !this.onMessage(type, body),
    );
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("close", () => pool.serverClosed(this, this.lastError));
    socket.on("error", () => {});
  }

  /** Reads from the server again (its client's buffer drained, or the session is no longer that client's). */
  unblock(): void {
    if (!this.waitingOn) return;
    this.waitingOn.off("drain", this.drained);
    this.waitingOn = undefined;
    this.socket.resume();
  }

  /** Whether its client has been passed part of a message whose rest has not come. */
  get midMessage(): boolean {
    return this.framer.midMessage;
  }

  /** ReadyForQuery messages still owed. */
  get owed(): number {
    return this.zSent - this.zSeen;
  }

  /** Settles once the server has taken every cancel sent for this session (see cancel). */
  cancelling: Promise<void> | undefined;

  /**
   * Asks the server to stop what the session runs, if it runs anything. The pool lends it again
   * only once the server has taken the request, as PgBouncer does: a cancel still on its way when
   * the query ends would otherwise land on the next client's query.
   */
  cancel(): void {
    if (this.owed <= 0 || !this.keyData) return;
    const all = Promise.all([this.cancelling, sendCancel(this.address, this.keyData)]).then(() => {
      if (this.cancelling === all) this.cancelling = undefined;
    });
    this.cancelling = all;
  }

  private onData(chunk: Buffer): void {
    // What answers the pooler's own query (a notice included) is not the client's, the end of it in this chunk too.
    const quiet = this.talking;
    let out: Buffer[];
    try {
      out = this.framer.push(chunk);
    } catch {
      this.socket.destroy();
      return;
    }
    const client = this.client;
    if (client && !quiet && out.length) {
      const bytes = out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
      client.sent.bytes += bytes.length;
      // A client reading slower than the server answers: the server waits (its socket unread), not
      // the emulator's memory. A session going back to the pool now has nothing more for it.
      if (!client.socket.write(bytes) && !this.releaseNow && !this.waitingOn) {
        this.waitingOn = client.socket;
        this.socket.pause();
        client.socket.once("drain", this.drained);
      }
    }
    if (this.releaseNow) {
      this.releaseNow = false;
      if (this.client) this.pool.release(this);
    }
  }

  /** One complete message of the types the pooler reads; false: the client does not see it. */
  private onMessage(type: number, body: Buffer): boolean {
    if (type === Z) {
      this.zSeen++;
      this.status = body[0] as number;
      // Parse and Close messages of batches now over that got no answer were skipped (an error).
      while (this.expected.length && (this.expected[0] as Expected).batch < this.zSeen)
        (this.expected.shift() as Expected).skipped?.();
    } else if (type === PARSE_COMPLETE || type === CLOSE_COMPLETE) {
      const next = this.expected[0];
      if (next && next.type === type) {
        this.expected.shift();
        next.done?.();
        if (next.drop) return false;
      }
    } else if (type === COPY_IN_RESPONSE) {
      this.client?.copyIn(this);
    } else if (type === COMMAND_COMPLETE) {
      const tag = body.toString("latin1", 0, Math.max(0, body.length - 1));
      if (tag === "DEALLOCATE ALL" || tag === "DISCARD ALL") {
        this.prepared.clear();
        this.client?.statements.clear();
      }
    } else if (type === S) {
      const [name, at] = cstring(body, 0);
      const value = cstring(body, at)[0];
      this.parameters.set(name, value);
      if (this.client && !this.internal && TRACKED.includes(name)) this.client.tracked.set(name, value);
    } else if (type === E) {
      this.lastError = message(E, body);
      // A copy-in an error ended (the server left it): its client's CopyDone, if any, ends none.
      if (this.client) this.client.copyingIn = false;
    }
    if (this.internal) {
      this.internal(type, body);
      return false;
    }
    // Not while the session holds part of what the client is sending (see PooledClient.midBatch).
    if (type === Z && this.owed <= 0 && this.status === IDLE && this.client && !this.client.midBatch)
      this.releaseNow = true;
    return true;
  }

  /** Whether the pooler itself is exchanging messages with the server (its client hears nothing). */
  get talking(): boolean {
    return this.internal !== undefined;
  }

  /** Runs a query whose results no client sees; resolves at its ReadyForQuery (rejects on an error). */
  quietly(sql: string): Promise<void> {
    return new Promise((resolve, reject) => {
      let failed: string | undefined;
      this.internal = (type, body) => {
        if (type === E) failed = errorFields(body).M ?? "error";
        if (type !== Z) return;
        this.internal = undefined;
        if (failed) reject(new Error(failed));
        else resolve();
      };
      this.zSent++;
      this.socket.write(query(sql));
    });
  }

  /** Waits (quietly) for the ReadyForQuery messages still owed to a client that left. */
  drain(): Promise<void> {
    if (this.owed <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.internal = (type) => {
        if (type !== Z || this.owed > 0) return;
        this.internal = undefined;
        resolve();
      };
    });
  }
}

/** A pool: the server sessions of one endpoint, database and role. */
class Pool {
  readonly clients = new Set<PooledClient>();
  private readonly servers = new Set<Server>();
  private readonly idle: Server[] = [];
  private readonly waiting: PooledClient[] = [];
  private opening = 0;
  /** What a new client is told of the server (ParameterStatus), from the first session opened. */
  parameters: Map<string, string> | undefined;
  /** Set when clients logging in with another credential got a pool of their own (retire). */
  private retired = false;

  constructor(
    readonly pooler: Pooler,
    readonly endpointId: string,
    readonly database: string,
    readonly user: string,
    /** How its sessions log in. */
    readonly credential: Credential,
    readonly size: number,
  ) {}

  /**
   * No new client comes to this pool any more (its role's password changed, or the role was
   * dropped and made again, whose sessions would fail every query with "invalid role OID"): its
   * clients keep its sessions until they leave, then its idle sessions close.
   */
  retire(): void {
    this.retired = true;
    this.closeIdleIfUnused();
  }

  private closeIdleIfUnused(): void {
    if (this.retired && this.clients.size === 0) this.closeIdle();
  }

  /** Logs its idle server sessions out. */
  closeIdle(): void {
    for (const server of this.idle.splice(0)) server.socket.end(terminate());
  }

  /** A server session is needed by `client`: lent now, or when one frees up or opens. */
  acquire(client: PooledClient): void {
    const server = this.idle.pop();
    if (server) {
      client.lend(server);
      return;
    }
    this.waiting.push(client);
    client.waitSince(this.pooler.options.queryWaitMs);
    this.grow();
  }

  private growTimer: NodeJS.Timeout | undefined;

  /** Sessions for the waiting clients: up to EAGER_SESSIONS at once, then as sessions are held. */
  private grow(): void {
    const open = this.servers.size + this.opening;
    if (!this.waiting.length || open >= this.size) return;
    // After a refused login the pool waits a while before it tries again (while it has sessions).
    const wait = open > 0 ? this.retryAt - wallNow() : 0;
    if (open < EAGER_SESSIONS && wait <= 0) void this.open().catch(() => {});
    else if (!this.growTimer) {
      this.growTimer = setTimeout(() => this.growHeld(), Math.max(HELD_MS, wait));
      this.growTimer.unref();
    }
  }

  /** When a session may be opened again after one could not be (PgBouncer's server_login_retry, shortened). */
  private retryAt = 0;

  /**
   * Counts the sessions busy with the same turn as at the last look (HELD_MS or more before: a
   * turn that ended meanwhile was seen ending, however late the timer fired) and opens one for each.
   */
  private growHeld(): void {
    this.growTimer = undefined;
    const idle = new Set(this.idle);
    let held = 0;
    for (const server of this.servers) {
      if (!idle.has(server) && server.turns === server.turnsSeen) held++;
      server.turnsSeen = server.turns;
    }
    const open = this.servers.size + this.opening;
    const wanted =
      open > 0 && wallNow() < this.retryAt ? 0 : Math.min(this.size, EAGER_SESSIONS + held) - open;
    for (let i = 0; i < Math.min(wanted, this.waiting.length); i++) void this.open().catch(() => {});
    this.grow();
  }

  /** No longer waiting (the client left). */
  forget(client: PooledClient): void {
    const i = this.waiting.indexOf(client);
    if (i >= 0) this.waiting.splice(i, 1);
    this.clients.delete(client);
    this.closeIdleIfUnused();
    this.pooler.prune(this);
  }

  /**
   * A server session back from a client: to the next waiting client, else idle; once the server
   * has taken the cancels sent for the client before (Server.cancel).
   */
  release(server: Server): void {
    const client = server.client;
    server.client = undefined;
    server.unblock();
    server.turns++;
    client?.returned(server);
    if (server.cancelling) void server.cancelling.then(() => this.lendOrKeep(server));
    else this.lendOrKeep(server);
  }

  private lendOrKeep(server: Server): void {
    // Closed while a cancel was on its way.
    if (!this.servers.has(server)) return;
    for (let next = this.waiting.shift(); next; next = this.waiting.shift()) {
      if (next.alive) {
        next.lend(server);
        return;
      }
    }
    server.idleSince = wallNow();
    this.idle.push(server);
    this.closeIdleIfUnused();
  }

  private opened: Promise<Server> | undefined;

  /** The session the pool's first clients wait for (one, whoever asks). */
  firstSession(): Promise<Server> {
    this.opened ??= this.open().finally(() => {
      this.opened = undefined;
    });
    return this.opened;
  }

  /** Opens a server session (for the waiting clients, or for the pool's first client's login). */
  async open(): Promise<Server> {
    this.opening++;
    try {
      const address = await this.pooler.services.ready(this.endpointId);
      const socket = net.connect(address);
      if ("port" in address) socket.setNoDelay(true);
      socket.on("error", () => {});
      const inbox = new Inbox(socket, this.pooler.options.loginTimeoutMs);
      let session: Awaited<ReturnType<typeof logIn>>;
      try {
        session = await logIn(
          socket,
          inbox,
          { user: this.user, database: this.database, application_name: "pgbouncer" },
          this.credential,
        );
      } catch (err) {
        socket.destroy();
        throw err;
      } finally {
        inbox.detach();
      }
      const server = new Server(this, socket, address, session.parameters, session.keyData);
      this.parameters ??= new Map(session.parameters);
      this.servers.add(server);
      this.opening--;
      this.release(server);
      return server;
    } catch (err) {
      this.opening--;
      this.retryAt = wallNow() + OPEN_RETRY_MS;
      // The compute refused a login (e.g. 53300, a dropped database): the clients waiting hear why.
      const message =
        err instanceof ComputeRefused
          ? err.raw
          : errorResponse(
              err instanceof DoorError
                ? err.fields
                : { code: "XX000", message: "Couldn't connect to compute node" },
            );
      if (this.servers.size + this.opening === 0)
        for (const client of this.waiting.splice(0)) client.close(message);
      throw err;
    }
  }

  serverClosed(server: Server, lastError: Buffer | undefined): void {
    this.servers.delete(server);
    const i = this.idle.indexOf(server);
    if (i >= 0) this.idle.splice(i, 1);
    const client = server.client;
    server.client = undefined;
    // Its client saw the server's last words, unless the pooler was talking to the server itself.
    client?.close(server.talking ? lastError : undefined);
    // A compute that stopped (suspend: 57P01) ends every client of the pool, as on Neon, where the
    // pooler runs on the compute. A session ended alone (pg_terminate_backend, 57P01 too) ends
    // only the client holding it, as with PgBouncer (a role's sessions ended by the emulator end
    // its clients through endRoleClients).
    if (
      lastError &&
      errorFields(lastError.subarray(5)).C === "57P01" &&
      !this.pooler.services.serving(this.endpointId)
    ) {
      this.endClients(lastError);
    } else this.grow();
    this.pooler.prune(this);
  }

  /** Ends every client of the pool with `last`, and its idle sessions. */
  endClients(last: Buffer): void {
    for (const client of this.clients) client.close(last);
    // Its other sessions are going too: none is lent again, and the next client's login opens
    // a session anew (waking the compute).
    for (const idle of this.idle.splice(0)) idle.socket.destroy();
    this.parameters = undefined;
  }

  /** Closes server sessions idle for longer than `idleMs`. */
  sweep(idleMs: number): void {
    const now = wallNow();
    for (const server of [...this.idle]) if (now - server.idleSince > idleMs) server.socket.end(terminate());
  }

  get empty(): boolean {
    return this.clients.size === 0 && this.servers.size === 0 && this.opening === 0;
  }

  closeAll(last: Buffer): void {
    clearTimeout(this.growTimer);
    for (const client of this.clients) client.close(last);
    for (const server of this.servers) server.socket.destroy();
  }
}

/** A client broke a rule of the pooler: PgBouncer's FATAL 08P01, and the connection closes. */
class PoolerRule extends Error {}

/** A named statement a client prepared: the pool's name for it, and what its Parse carried after the name. */
interface ClientStatement {
  name: string;
  rest: Buffer;
}

/** One pooled client connection, after its login. */
class PooledClient {
  readonly tracked = new Map<string, string>();
  /** Protocol-level named statements, by the client's name (kept across server sessions). */
  readonly statements = new Map<string, ClientStatement>();
  /** The session lent to this client, once what waited for it has been sent. */
  server: Server | undefined;
  /** A session being readied for this client (its tracked parameters being set). */
  private lending: Server | undefined;
  alive = true;
  /** What came before a session was lent (the client's socket paused once it asked for one). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private asking = false;
  /** The session's socket buffer is full: nothing more is read from the client until it drains. */
  private serverFull = false;
  private waitTimer: NodeJS.Timeout | undefined;
  private readonly framer: Framer;
  private terminated = false;
  /** Messages went to the session since the client's last Sync or Query. */
  private unsynced = false;
  /**
   * Syncs sent since the last Execute (none since a Query): a COPY FROM STDIN that Execute began
   * ignores them (Postgres skips Sync during copy-in), so they are owed no ReadyForQuery.
   */
  private syncsSinceExecute: number | undefined;
  /** The server is in copy-in (it sent CopyInResponse) until the client's CopyDone or CopyFail. */
  copyingIn = false;
  /**
   * A CopyDone or CopyFail sent before the CopyInResponse came (a client pipelining the whole
   * copy): the Syncs between it and its Execute, owed nothing once that response comes.
   */
  private copySyncsPending = 0;

  constructor(
    readonly pool: Pool,
    readonly socket: Duplex,
    /** Its startup settings PgBouncer tracks (pooledStartup; the login refused any other parameter). */
    settings: ReadonlyMap<string, string>,
    /** Where the compute's bytes sent to this client are counted. */
    readonly sent: EgressCounter,
  ) {
    for (const [name, value] of settings) this.tracked.set(name, value);
    this.framer = new Framer(
      (t, head) => {
        if (t === X || t === DESCRIBE || t === CLOSE) return true;
        // A Parse of the unnamed statement, a Bind of it: passed on as they come (a parameter may be
        // hundreds of MB), named ones renamed (rewrite).
        if (t === PARSE) return head.length ? head[0] !== 0 : undefined;
        if (t !== BIND) return false;
        const portalEnd = head.indexOf(0);
        return portalEnd === -1 || portalEnd + 1 === head.length ? undefined : head[portalEnd + 1] !== 0;
      },
      (type) => {
        const server = this.server as Server;
        // An unnamed statement's Parse, passed on: its ParseComplete is the client's.
        if (type === PARSE) server.expected.push({ type: PARSE_COMPLETE, drop: false, batch: server.zSent });
        // A copy's messages belong to what began it (a Query, or an Execute before its Sync).
        if (type !== COPY_DATA && type !== COPY_DONE && type !== COPY_FAIL)
          this.unsynced = type !== Q && type !== S && type !== F;
        if (type === Q || type === S || type === F) server.zSent++;
        if (type === EXECUTE || type === Q) {
          this.syncsSinceExecute = type === EXECUTE ? 0 : undefined;
          this.copySyncsPending = 0;
        } else if (type === S && this.syncsSinceExecute !== undefined) this.syncsSinceExecute++;
        else if (type === COPY_DONE || type === COPY_FAIL) {
          if (this.copyingIn) this.skipSyncs(server, this.syncsSinceExecute ?? 0);
          else this.copySyncsPending = this.syncsSinceExecute ?? 0;
          this.copyingIn = false;
          this.syncsSinceExecute = 0;
        }
      },
      (type, body, instead) => {
        // The client's Terminate is the pooler's to act on: the session it holds goes on (see abandon).
        if (type === X) {
          this.terminated = true;
          return true;
        }
        this.unsynced = true;
        return this.rewrite(type, body, instead);
      },
    );
  }

  /** The server sent CopyInResponse: a copy-in begins (or, if the client already ended it, ends). */
  copyIn(server: Server): void {
    if (this.copySyncsPending) {
      this.skipSyncs(server, this.copySyncsPending);
      this.copySyncsPending = 0;
    } else this.copyingIn = true;
  }

  /** Syncs sent during a copy-in, which Postgres skips: no ReadyForQuery is owed for them. */
  private skipSyncs(server: Server, count: number): void {
    if (count > 0) server.zSent -= Math.min(count, server.owed);
  }

  onData(chunk: Buffer): void {
    if (!this.alive) return;
    if (this.server) {
      this.send(this.server, chunk);
      return;
    }
    if (chunk.length === 5 && chunk[0] === X && !this.pending.length) {
      this.close();
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.asking || !this.firstMessageIn()) return;
    this.asking = true;
    this.socket.pause();
    this.pool.acquire(this);
  }

  /** Whether what waits holds a whole first message, or enough of it to stream the rest. */
  private firstMessageIn(): boolean {
    if (this.pendingBytes >= STREAM_AFTER_BYTES) return true;
    if (this.pendingBytes < 5) return false;
    const first = this.pending[0] as Buffer;
    const head = first.length >= 5 ? first : Buffer.concat(this.pending, this.pendingBytes);
    // A length that is no length is the framer's to refuse, once a session is lent.
    return this.pendingBytes >= 1 + head.readInt32BE(1);
  }

  /** Passes the client's bytes to its session, named statements renamed to the pool's. */
  private send(server: Server, chunk: Buffer): void {
    let out: Buffer[];
    try {
      out = this.framer.push(chunk);
    } catch (err) {
      this.close(poolerError((err as Error).message));
      return;
    }
    const written =
      out.length === 0 || server.socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
    if (!written && !this.serverFull) {
      // The server reads slower than the client sends (a lock it waits on, a large COPY).
      this.serverFull = true;
      this.socket.pause();
      server.socket.once("drain", () => {
        this.serverFull = false;
        // Unless it now waits for a session (paused until one is lent).
        if (this.alive && !this.asking) this.socket.resume();
      });
    }
    if (this.terminated) this.close();
  }

  /**
   * Parse, Bind, Describe and Close: what goes to the server for them (as PgBouncer's
   * max_prepared_statements). True when `out` holds what goes instead; false: the message as it is.
   */
  private rewrite(type: number, body: Buffer, out: Buffer[]): boolean {
    const server = this.server as Server;
    const expect = (what: number, drop: boolean, done?: () => void, skipped?: () => void) =>
      server.expected.push({
        type: what,
        drop,
        batch: server.zSent,
        ...(done ? { done } : {}),
        ...(skipped ? { skipped } : {}),
      });
    /** Records a statement prepared on the session, closing there the one used least recently past the bound. */
    const prepared = (name: string) => {
      server.prepared.add(name);
      if (server.prepared.size <= MAX_PREPARED_STATEMENTS) return;
      const oldest = server.prepared.values().next().value as string;
      server.prepared.delete(oldest);
      out.push(message(CLOSE, Buffer.from(`S${oldest}\0`)));
      // Skipped (an error earlier in its batch): it is still there.
      expect(CLOSE_COMPLETE, true, undefined, () => server.prepared.add(oldest));
    };
    /** Makes sure the session has the statement, preparing it first if not (its answer unseen). */
    const ensure = (statement: ClientStatement) => {
      if (server.prepared.delete(statement.name)) {
        server.prepared.add(statement.name); // used now: the most recent
        return;
      }
      out.push(message(PARSE, Buffer.from(`${statement.name}\0`), statement.rest));
      expect(PARSE_COMPLETE, true, undefined, () => server.prepared.delete(statement.name));
      prepared(statement.name);
    };
    const known = (name: string) => {
      const statement = this.statements.get(name);
      if (!statement) throw new PoolerRule("prepared statement did not exist");
      return statement;
    };
    if (type === PARSE) {
      const [name, at] = cstring(body, 0);
      if (!name) {
        expect(PARSE_COMPLETE, false);
        return false;
      }
      if (this.statements.has(name)) throw new PoolerRule("prepared statement name is already in use");
      const rest = Buffer.from(body.subarray(at));
      const statement = { name: this.pool.pooler.statementName(rest), rest };
      this.statements.set(name, statement);
      const forget = () => {
        if (this.statements.get(name) === statement) this.statements.delete(name);
      };
      // Skipped with its Parse (an error earlier in their batch), a Close leaves the statement there.
      let closeSkipped = false;
      if (server.prepared.delete(statement.name)) {
        // Already on this session (another client's): closed and prepared again, so the client
        // gets its ParseComplete in order.
        out.push(message(CLOSE, Buffer.from(`S${statement.name}\0`)));
        expect(CLOSE_COMPLETE, true, undefined, () => {
          closeSkipped = true;
        });
      }
      out.push(message(PARSE, Buffer.from(`${statement.name}\0`), rest));
      expect(PARSE_COMPLETE, false, undefined, () => {
        if (closeSkipped) server.prepared.add(statement.name);
        else server.prepared.delete(statement.name);
        forget();
      });
      prepared(statement.name);
      return true;
    }
    if (type === BIND) {
      const [, afterPortal] = cstring(body, 0);
      const [name, at] = cstring(body, afterPortal);
      if (!name) return false;
      const statement = known(name);
      ensure(statement);
      out.push(
        message(BIND, body.subarray(0, afterPortal), Buffer.from(`${statement.name}\0`), body.subarray(at)),
      );
      return true;
    }
    const [name] = cstring(body, 1);
    const ofStatement = body[0] === 0x53 && name !== "";
    if (type === DESCRIBE) {
      if (!ofStatement) return false;
      const statement = known(name);
      ensure(statement);
      out.push(message(DESCRIBE, Buffer.from(`S${statement.name}\0`)));
      return true;
    }
    expect(CLOSE_COMPLETE, false);
    if (!ofStatement) return false;
    // The statement stays on the sessions that have it (others may use it); the client's name goes.
    this.statements.delete(name);
    out.push(message(CLOSE, Buffer.from(`S${CLOSED_NAME}\0`)));
    return true;
  }

  waitSince(ms: number): void {
    this.waitTimer = setTimeout(() => this.close(poolerError("query_wait_timeout")), ms);
    this.waitTimer.unref();
  }

  /** A server session is this client's until its transaction ends. */
  lend(server: Server): void {
    clearTimeout(this.waitTimer);
    server.client = this;
    server.turns++;
    this.lending = server;
    const set = TRACKED.filter((name) => {
      const want = this.tracked.get(name);
      return want !== undefined && want.toLowerCase() !== (server.parameters.get(name) ?? "").toLowerCase();
    });
    const go = () => {
      if (!this.alive || this.lending !== server) return;
      // What the session took is the client's value as Postgres keeps it (an application_name cut
      // to 63 bytes): the next session compared with it needs no SET again.
      for (const name of set) {
        const taken = server.parameters.get(name);
        if (taken !== undefined) this.tracked.set(name, taken);
      }
      this.lending = undefined;
      this.server = server;
      const pending = this.pending;
      this.pending = [];
      this.pendingBytes = 0;
      this.asking = false;
      for (const chunk of pending) if (this.alive) this.send(server, chunk);
      if (!this.serverFull) this.socket.resume();
    };
    if (!set.length) {
      go();
      return;
    }
    const sql = set.map((name) => `SET ${name}=${literal(this.tracked.get(name) as string)};`).join("");
    server.quietly(sql).then(go, () => server.socket.destroy());
  }

  /**
   * Whether the session holds part of what the client is sending: messages of an extended-protocol
   * batch whose Sync has not come (a Parse, a Bind the server has taken), or part of a message.
   */
  get midBatch(): boolean {
    return this.unsynced || this.framer.midMessage;
  }

  /**
   * The pool took back the session. The start of a message the framer held back (a header cut
   * short, part of a Parse) waits with what comes next, for the next session: it had stayed in
   * the framer, and the rest, read as a message of its own, waited for good.
   */
  returned(server: Server): void {
    if (this.server !== server) return;
    this.server = undefined;
    const held = this.framer.takeHeld();
    for (const chunk of held) this.pendingBytes += chunk.length;
    this.pending.unshift(...held);
  }

  /**
   * Ends the client's connection (with a last message, unless the session it holds has passed it
   * part of one); a session it held goes back clean, or is closed.
   */
  close(last?: Buffer): void {
    if (!this.alive) return;
    this.alive = false;
    clearTimeout(this.waitTimer);
    if (last && !this.server?.midMessage) this.socket.end(last);
    else this.socket.end();
    setTimeout(() => this.socket.destroy(), 2000).unref();
    const server = this.server ?? this.lending;
    this.server = undefined;
    this.lending = undefined;
    if (server && server.client === this) this.abandon(server);
    this.pool.forget(this);
  }

  /**
   * A session whose client left. What the client had sent runs to its end, as on Postgres and
   * behind PgBouncer (a statement it sent, a COMMIT, is kept: Postgres notices a client gone only
   * at its next read), and a transaction left open is rolled back before the session goes back to
   * the pool. One holding part of what the client was sending (half a message, an extended-protocol
   * batch without its Sync, a COPY FROM STDIN under way), or still busy after ABANDON_MS, is
   * closed, as PgBouncer closes it: Postgres then ends what it runs and rolls back what it leaves
   * open (a COPY fails as at any client's end).
   */
  private abandon(server: Server): void {
    server.client = undefined;
    server.unblock();
    if (this.midBatch || this.framer.partial || this.copyingIn) {
      server.socket.destroy();
      return;
    }
    const timer = setTimeout(() => server.socket.destroy(), ABANDON_MS);
    timer.unref();
    server
      .drain()
      // Not while a cancel the client asked for may still land: on the ROLLBACK, it would cost the session.
      .then(() => server.cancelling)
      .then(() => (server.status === IDLE ? undefined : server.quietly("ROLLBACK")))
      .then(
        () => {
          clearTimeout(timer);
          if (server.status === IDLE && !server.socket.destroyed) server.pool.release(server);
          else server.socket.destroy();
        },
        () => server.socket.destroy(),
      );
  }
}

/** Every pool of the front door, and the pooled clients per endpoint. */
export class Pooler {
  private readonly pools = new Map<string, Pool>();
  /** Pools new clients no longer come to (Pool.retire), until their clients and sessions are gone. */
  private readonly retired = new Set<Pool>();
  private readonly perEndpoint = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    readonly services: PoolerServices,
    readonly options: PoolerOptions = POOLER_DEFAULTS,
  ) {
    this.sweeper = setInterval(
      () => {
        for (const pool of this.allPools()) pool.sweep(options.serverIdleMs);
      },
      Math.min(30_000, options.serverIdleMs),
    );
    this.sweeper.unref();
  }

  /**
   * The pool's name for a statement, by what its Parse carries after the name (its text and
   * parameter types): `PGBOUNCER_<hash>`, the same for every client, with no table of them to grow.
   */
  statementName(rest: Buffer): string {
    return `PGBOUNCER_${createHash("sha256").update(rest).digest("base64url").slice(0, 32)}`;
  }

  /** Whether the endpoint takes another pooled client (PgBouncer checks before authentication). */
  admits(endpointId: string): boolean {
    return (this.perEndpoint.get(endpointId) ?? 0) < this.options.maxClients;
  }

  /**
   * Serves an authenticated pooled client: answers its login with the pool's server parameters
   * and a key of its own for CancelRequests, then lends it server sessions transaction by
   * transaction until it leaves.
   */
  async serve(
    client: Duplex,
    inbox: MessageSource,
    params: Record<string, string>,
    /** The client's tracked startup settings (pooledStartup). */
    settings: ReadonlyMap<string, string>,
    login: Login,
    cancelTargets: Map<string, CancelTarget>,
  ): Promise<void> {
    const endpointId = login.target.endpointId;
    const database = params.database ?? params.user ?? "";
    const user = params.user ?? "";
    const key = JSON.stringify([endpointId, database, user]);
    let pool = this.pools.get(key);
    if (pool && !sameCredential(pool.credential, login.credential)) {
      this.pools.delete(key);
      this.retired.add(pool);
      pool.retire();
      this.prune(pool);
      pool = undefined;
    }
    if (!pool) {
      pool = new Pool(
        this,
        endpointId,
        database,
        user,
        login.credential,
        Math.max(1, Math.floor(0.9 * login.maxConnections)),
      );
      this.pools.set(key, pool);
    }
    const count = (this.perEndpoint.get(endpointId) ?? 0) + 1;
    this.perEndpoint.set(endpointId, count);
    const sent = this.services.egress.hold(login.compute);
    const pooled = new PooledClient(pool, client, settings, sent);
    pool.clients.add(pooled);
    let counted = false;
    const leave = () => {
      this.services.egress.release(sent);
      this.perEndpoint.set(endpointId, (this.perEndpoint.get(endpointId) ?? 1) - 1);
      if (this.perEndpoint.get(endpointId) === 0) this.perEndpoint.delete(endpointId);
      if (counted) this.count(endpointId, -1);
    };
    let parameters: Map<string, string>;
    try {
      // The first client of a pool waits for a server session: its parameters answer the login (and
      // a refused login — a missing database, no slot left — is this client's error).
      parameters = pool.parameters ?? (await pool.firstSession()).parameters;
    } catch (err) {
      pool.forget(pooled);
      leave();
      throw err;
    }
    const keyData = randomBytes(8);
    keyData[0] = (keyData[0] as number) & 0x7f;
    const cancelKey = cancelKeyOf(keyData);
    cancelTargets.set(cancelKey, {
      endpointId,
      cancel: () => pooled.server?.cancel(),
    });
    const toClient: Buffer[] = [];
    if (login.serverFinal) toClient.push(authenticationSaslFinal(login.serverFinal));
    toClient.push(authenticationOk());
    // What the client did not set at login is the server's default, so a SET another client left
    // on a session is undone before this one uses it (as PgBouncer's variable cache does).
    for (const name of TRACKED) {
      const value = parameters.get(name);
      if (!pooled.tracked.has(name) && value !== undefined) pooled.tracked.set(name, value);
    }
    const reported = new Map(parameters);
    for (const [name, value] of pooled.tracked) reported.set(name, value);
    for (const [name, value] of reported) toClient.push(parameterStatus(name, value));
    toClient.push(backendKeyData(keyData), readyForQuery());
    const early = inbox.frames.rest();
    inbox.detach();
    client.write(Buffer.concat(toClient));
    counted = true;
    this.count(endpointId, 1);
    client.on("data", (chunk: Buffer) => pooled.onData(chunk));
    client.once("end", () => pooled.close());
    const gone = () => {
      pooled.close();
      cancelTargets.delete(cancelKey);
      leave();
    };
    client.once("close", gone);
    // A client that closed while it waited for the pool's first session is gone already.
    if (client.closed) {
      client.off("close", gone);
      gone();
      return;
    }
    if (early.length) pooled.onData(early);
    client.resume();
  }

  /** Activity bookkeeping: a busy database must not end a client or the process. */
  private count(endpointId: string, delta: 1 | -1): void {
    try {
      this.services.connected(endpointId, delta);
    } catch {
      // the open-connection count is only used for auto-suspend
    }
  }

  /** Drops a pool nobody uses any more. */
  prune(pool: Pool): void {
    const key = JSON.stringify([pool.endpointId, pool.database, pool.user]);
    if (!pool.empty) return;
    if (this.pools.get(key) === pool) this.pools.delete(key);
    this.retired.delete(pool);
  }

  /** Logs out the idle server sessions of the endpoint's pools on `database` (Postgres renames no database with sessions on it). */
  closeIdle(endpointId: string, database: string): void {
    for (const pool of this.allPools())
      if (pool.endpointId === endpointId && pool.database === database) pool.closeIdle();
  }

  /** Ends the clients logged in as `roles` on the endpoint (their sessions are being ended: 57P01). */
  endRoleClients(endpointId: string, roles: string[]): void {
    for (const pool of this.allPools())
      if (pool.endpointId === endpointId && roles.includes(pool.user)) {
        pool.endClients(TERMINATED);
        this.prune(pool);
      }
  }

  private allPools(): Pool[] {
    return [...this.pools.values(), ...this.retired];
  }

  /** Ends every pooled client (with a 57P01, as the compute's shutdown would) and server session (shutdown). */
  close(): void {
    clearInterval(this.sweeper);
    for (const pool of this.allPools()) pool.closeAll(TERMINATED);
  }
}

/** Whether two logins reach the server as the same role with the same password. */
function sameCredential(a: Credential, b: Credential): boolean {
  if ("password" in a) return "password" in b && a.password === b.password;
  return (
    "keys" in b && a.keys.serverKey.equals(b.keys.serverKey) && a.keys.clientKey.equals(b.keys.clientKey)
  );
}

/**
 * A string literal for SET, read the same whatever the session's standard_conforming_strings: an
 * escape string when it holds a backslash, as PgBouncer quotes it.
 */
function literal(value: string): string {
  const quoted = value.replace(/'/g, "''");
  return value.includes("\\") ? `E'${quoted.replace(/\\/g, "\\\\")}'` : `'${quoted}'`;
}
