import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import net from "node:net";
import path from "node:path";
import type { Pool, PoolClient, QueryResult } from "pg";
import type { Logger } from "pino";
import { parse as parseArray } from "postgres-array";
import type { ComputeAddress } from "../compute/postgres/driver.js";
import { within } from "../platform/clock.js";
import { pg } from "../platform/pg.js";
import type { Compute } from "./egress.js";
import { sendCancel } from "./relay.js";
import { fromHostName, fromPassword, RoutingError, routeOf, type Target } from "./routing.js";
import { type DoorServices, networkRefusal, passwordHolds, TEXTS } from "./session.js";
import { DoorError, TERMINATED_TEXT } from "./wire.js";

/**
 * Neon's SQL over HTTP (`POST /sql`, what `neon()` of @neondatabase/serverless and Drizzle's
 * neon-http send): the `Neon-Connection-String` header names the endpoint, role, password and
 * database; the body is one query or a batch run in one transaction; the answer is JSON. Texts,
 * statuses, limits and the JSON shapes are the proxy's (proxy/src/serverless/sql_over_http.rs).
 */

/** The proxy's limit on a request body and on a response (10 MiB each). */
export const SQL_MAX_BYTES = 10 * 1024 * 1024;

/** Neon-Batch-Isolation-Level's values (a Map: a header naming a prototype property is none of them). */
const ISOLATION = new Map([
  ["Serializable", "SERIALIZABLE"],
  ["ReadUncommitted", "READ UNCOMMITTED"],
  ["ReadCommitted", "READ COMMITTED"],
  ["RepeatableRead", "REPEATABLE READ"],
]);

/** What a pooled server session is reset with before the next request uses it (as the proxy's pool does). */
const RESET =
  "ROLLBACK; CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; DEALLOCATE ALL; UNLISTEN *; " +
  "SELECT pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES;";

/** A request running longer than this counts as an open connection (auto-suspend waits for it). */
const LONG_REQUEST_MS = 1000;

/** The longest a shutdown waits for sessions requests hold. */
const CLOSE_WAIT_MS = 10_000;
/** How long an idle server session stays in the pool. */
const IDLE_MS = 5 * 60 * 1000;
/** Server sessions per endpoint, role and database (the proxy's pool keeps 20 per endpoint). */
const POOL_SIZE = 20;

/** The order and the full set of keys of the proxy's error body. */
const ERROR_KEYS = [
  "message",
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "severity",
  "where",
  "table",
  "column",
  "schema",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
] as const;

/** A failure answered with the proxy's error body. */
class SqlError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const bad = (message: string) => new SqlError(400, message);

interface QueryData {
  query: string;
  params: unknown[];
  arrayMode?: boolean;
  /**
   * The console's SQL editor only (never read from a request body): the text may hold several
   * statements, run with the simple query protocol; the answer is the last one's result, as psql
   * -c shows it.
   */
  script?: boolean;
}

/** What the handler reads of a request (node's or a web one). */
interface SqlRequest {
  method: string;
  header(name: string): string | null;
  /** The body, up to the limit (a larger one: SqlError 413). */
  body(): Promise<string>;
  /** Calls `then` if the client goes away before its answer (node's requests only). */
  onGone?(then: () => void): void;
  /** The console's editor: a single query is a script (QueryData.script). */
  script?: boolean;
  /** The client's address (none for in-process requests). */
  peer?: string;
}

interface SqlReply {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

interface Connection {
  target: Target;
  user: string;
  password: string;
  database: string;
}

const CORS = { "Access-Control-Allow-Origin": "*" };

export class SqlOverHttp {
  private readonly pools = new Map<string, Pool>();
  /**
   * Server sessions whose connection ended (a suspend, a restore, pg_terminate_backend): each
   * session listens for that from its first request on, so the end of one a request holds is
   * never an unhandled error, and it is discarded instead of reset.
   */
  private readonly lost = new WeakSet<PoolClient>();
  private readonly watched = new WeakSet<PoolClient>();

  constructor(
    private readonly services: DoorServices,
    private readonly logger?: Logger,
  ) {}

  /**
   * Answers a request to `/sql` made through node's http server: read from node's request and
   * written to its response directly (a web Request and Response per query cost more than the
   * query). Resolves once the answer is written.
   */
  async serveNode(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
    const reply = await this.answer({
      method: incoming.method ?? "GET",
      header: (name) => {
        const values = incoming.headersDistinct[name.toLowerCase()];
        if (!values) return null;
        // Node would join two into one ("a, b"): a connection string no one sent.
        if (values.length > 1) throw bad(`invalid header: ${name.toLowerCase()} (sent more than once)`);
        return values[0] ?? null;
      },
      body: () => readNodeBody(incoming),
      ...(incoming.socket.remoteAddress ? { peer: incoming.socket.remoteAddress } : {}),
      onGone: (then) => {
        const gone = () => {
          if (!outgoing.writableFinished) then();
        };
        outgoing.once("close", gone);
      },
    });
    if (outgoing.writableEnded || outgoing.destroyed) return;
    outgoing.writeHead(reply.status, reply.headers);
    outgoing.end(reply.body ?? undefined);
  }

  /** Answers a web Request to `/sql` (any method). */
  async handle(request: Request): Promise<Response> {
    const reply = await this.answer({
      method: request.method,
      header: (name) => request.headers.get(name),
      body: () => readBody(request),
    });
    return new Response(reply.body, { status: reply.status, headers: reply.headers });
  }

  /**
   * One statement for the console's SQL editor, on the same path as a `/sql` request (wake,
   * login, limits, Postgres errors): the answer `/sql` would give in array mode, and its status.
   * `peer` is the browser's address (the project's IP allow list applies to it).
   */
  async statement(
    connectionString: string,
    query: string,
    peer?: string,
  ): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = {
      "neon-connection-string": connectionString,
      "neon-array-mode": "true",
    };
    const reply = await this.answer({
      method: "POST",
      header: (name) => headers[name.toLowerCase()] ?? null,
      body: async () => JSON.stringify({ query, params: [] }),
      script: true,
      ...(peer ? { peer } : {}),
    });
    return { status: reply.status, body: reply.body === null ? null : JSON.parse(reply.body) };
  }

  private async answer(request: SqlRequest): Promise<SqlReply> {
    const requestId = randomUUID();
    if (request.method === "OPTIONS")
      return {
        status: 200,
        headers: {
          Allow: "OPTIONS, POST",
          ...CORS,
          "Access-Control-Allow-Headers":
            "Authorization, Neon-Connection-String, Neon-Raw-Text-Output, Neon-Array-Mode, Neon-Pool-Opt-In, Neon-Batch-Read-Only, Neon-Batch-Isolation-Level",
          "Access-Control-Max-Age": "86400",
          "neon-request-id": requestId,
        },
        body: null,
      };
    if (request.method !== "POST")
      return json(400, "query is not supported", { "neon-request-id": requestId });
    try {
      const { body: text, headers, compute } = await this.execute(request);
      const bytes = Buffer.byteLength(text);
      if (bytes > SQL_MAX_BYTES) throw responseTooLarge();
      // The answer's bytes are the endpoint's egress, as the proxy counts them (the JSON alone).
      this.services.egress.add(compute, bytes);
      return {
        status: 200,
        headers: { "Content-Type": "application/json", ...CORS, ...headers, "neon-request-id": requestId },
        body: text,
      };
    } catch (err) {
      const failure = err instanceof SqlError ? err : this.unexpected(err);
      return json(failure.status, errorBody(failure), { ...CORS, "neon-request-id": requestId });
    }
  }

  /**
   * Ends every pooled server session. A session a request still holds ends once it is given back
   * (the shutdown's closing of the HTTP connections cancels their queries); the wait is bounded,
   * so a session never given back cannot hold the shutdown (its server's stop ends it).
   */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await within(Promise.allSettled(pools.map((p) => p.end())), CLOSE_WAIT_MS, undefined);
  }

  private unexpected(err: unknown): SqlError {
    this.logger?.error({ err }, "sql over http: unexpected failure");
    return new SqlError(500, TEXTS.couldNotConnect);
  }

  private async execute(
    request: SqlRequest,
  ): Promise<{ body: string; headers: Record<string, string>; compute: Compute }> {
    const connection = connectionOf(request.header("Neon-Connection-String"));
    const header = (name: string) => request.header(name) === "true";
    const isolationName = request.header("Neon-Batch-Isolation-Level");
    const isolation = isolationName === null ? undefined : ISOLATION.get(isolationName);
    if (isolationName !== null && isolation === undefined) throw bad("invalid isolation level");
    const payload = parsePayload(await request.body());
    const format = { raw: header("Neon-Raw-Text-Output"), arrayMode: header("Neon-Array-Mode") };

    const found = this.services.login(connection.target.endpointId, connection.user);
    if (!found.found) throw bad(TEXTS.wrongPassword(connection.user));
    const refusal = networkRefusal(found, request.peer);
    if (refusal) throw bad(refusal);
    if (
      !(await passwordHolds(
        this.services,
        found,
        connection.target.endpointId,
        connection.user,
        connection.password,
      ))
    )
      throw bad(TEXTS.wrongPassword(connection.user));
    if (found.disabled) throw bad(TEXTS.disabled);
    const endpointId = connection.target.endpointId;
    const compute = { endpointId, branchId: found.branchId, projectId: found.projectId };
    const address = await this.services.ready(endpointId).catch((err: unknown) => {
      if (err instanceof DoorError)
        throw new SqlError(400, err.fields.message, err.fields.detail ? { detail: err.fields.detail } : {});
      this.logger?.warn({ err, endpoint: endpointId }, "sql over http: wake failed");
      throw new SqlError(500, TEXTS.couldNotConnect);
    });
    // A query is activity (ready() stamped it); one still running after a second also counts as an
    // open connection, so auto-suspend never cuts it off.
    let counted = false;
    const long = setTimeout(() => {
      counted = this.count(endpointId, 1);
    }, LONG_REQUEST_MS);
    // A client gone mid-request has its query cancelled (and a batch rolled back), as the proxy
    // does; one gone while it waited for a session runs nothing.
    let gone = false;
    let client: PoolClient | undefined;
    let holding = true;
    request.onGone?.(() => {
      if (!holding) return;
      gone = true;
      if (client) cancel(client, address);
    });
    try {
      client = await this.connect(address, connection);
      let broken = false;
      try {
        if (gone) throw new SqlError(400, CANCELLED, { code: "08P01" });
        if (!Array.isArray(payload))
          return {
            body: await run(client, address, { ...payload, script: request.script === true }, format),
            headers: {},
            compute,
          };
        const modes = [
          ...(isolation ? [`ISOLATION LEVEL ${isolation}`] : []),
          ...(header("Neon-Batch-Read-Only") ? ["READ ONLY"] : []),
          ...(header("Neon-Batch-Deferrable") ? ["DEFERRABLE"] : []),
        ];
        await client.query(["START TRANSACTION", modes.join(", ")].join(" ").trim());
        const results: string[] = [];
        try {
          for (const query of payload) results.push(await run(client, address, query, format));
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK").catch(() => {});
          throw err;
        }
        const echoed: Record<string, string> = {};
        if (isolationName !== null) echoed["Neon-Batch-Isolation-Level"] = isolationName;
        if (header("Neon-Batch-Read-Only")) echoed["Neon-Batch-Read-Only"] = "true";
        if (header("Neon-Batch-Deferrable")) echoed["Neon-Batch-Deferrable"] = "true";
        return { body: `{"results":[${results.join(",")}]}`, headers: echoed, compute };
      } catch (err) {
        // A FATAL error (57P01 terminating connection) ends the session too.
        broken = !(err instanceof SqlError) && (!isDatabaseError(err) || err.severity === "FATAL");
        if (gone) throw new SqlError(400, CANCELLED, { code: "08P01" });
        if (isDatabaseError(err)) throw postgresError(err);
        // The session's connection ended under the request (its compute stopped): what the
        // others on it got from the server.
        if (!(err instanceof SqlError) && this.lost.has(client))
          throw new SqlError(400, TERMINATED_TEXT, {
            code: "57P01",
            severity: "FATAL",
          });
        throw err;
      } finally {
        // The session goes back to the pool: a client leaving now cancels nothing on it.
        holding = false;
        this.release(client, broken);
      }
    } finally {
      holding = false;
      clearTimeout(long);
      if (counted) this.count(endpointId, -1);
      this.services.statementsRan(endpointId);
    }
  }

  /** Activity bookkeeping: a busy database must not fail a query. */
  private count(endpointId: string, delta: 1 | -1): boolean {
    try {
      this.services.connected(endpointId, delta);
      return true;
    } catch (err) {
      this.logger?.warn({ err, endpoint: endpointId }, "sql over http: could not record a connection");
      return false;
    }
  }

  private async connect(address: ComputeAddress, c: Connection): Promise<PoolClient> {
    const where =
      "path" in address
        ? { host: path.dirname(address.path), port: Number(address.path.split(".").pop()) }
        : { host: address.host, port: address.port };
    const key = JSON.stringify([c.target.endpointId, c.database, where, c.user, c.password]);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new (pg().Pool)({
        ...where,
        user: c.user,
        password: c.password,
        database: c.database,
        max: POOL_SIZE,
        idleTimeoutMillis: IDLE_MS,
        stream: guardedSocket,
        allowExitOnIdle: true,
      });
      // A server that went away (suspended) ends its idle sessions; the pool drops them.
      pool.on("error", () => {});
      const created = pool;
      pool.on("remove", () => this.dropIfEmpty(key, created));
      this.pools.set(key, pool);
    }
    try {
      // A session whose connection ended while it waited in the pool (a suspend) is not lent.
      for (let tries = 0; ; tries++) {
        const client = await pool.connect();
        if (!this.watched.has(client)) {
          this.watched.add(client);
          client.on("error", () => this.lost.add(client));
        }
        if (!this.lost.has(client) || tries >= POOL_SIZE) return client;
        client.release(true);
      }
    } catch (err) {
      // A session that never opened is no `remove`: a pool left with none goes here (one per
      // database name that does not exist had been kept for good).
      this.dropIfEmpty(key, pool);
      if (isDatabaseError(err)) throw postgresError(err);
      this.logger?.warn({ err }, "sql over http: could not connect to the compute");
      throw new SqlError(500, "could not connect to postgres in compute");
    }
  }

  /** Forgets and ends a pool left with no session, open or opening. */
  private dropIfEmpty(key: string, pool: Pool): void {
    if (pool.totalCount === 0 && this.pools.get(key) === pool) {
      this.pools.delete(key);
      void pool.end().catch(() => {});
    }
  }

  /**
   * Ends the endpoint's pools of sessions on `database` (Postgres renames no database with
   * sessions on it): their idle sessions log out now, the others once their request ends.
   */
  closeIdle(endpointId: string, database: string): void {
    for (const [key, pool] of this.pools) {
      const [endpoint, db] = JSON.parse(key) as [string, string];
      if (endpoint !== endpointId || db !== database) continue;
      this.pools.delete(key);
      void pool.end().catch(() => {});
    }
  }

  /** Back to the pool once reset, so the next request finds a fresh session (a failed reset discards it). */
  private release(client: PoolClient, broken: boolean): void {
    if (broken || this.lost.has(client)) {
      client.release(true);
      return;
    }
    // Not while a cancel sent for the request may still land: on the next request's query.
    const cancelled = cancels.get(client);
    cancels.delete(client);
    (cancelled ?? Promise.resolve())
      .then(() => client.query(RESET))
      .then(
        () => client.release(),
        (err: Error) => client.release(err),
      );
  }
}

/** Endpoint, role, password and database from a connection string, as the front door reads them. */
function connectionOf(value: string | null): Connection {
  if (!value) throw bad("invalid header: neon-connection-string");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad("invalid connection string: relative URL without a base");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw bad("incorrect scheme");
  if (!url.pathname) throw bad("missing database name");
  const user = decoded(url.username, "invalid username: invalid utf-8 sequence");
  const password = decoded(url.password, "invalid password: invalid utf-8 sequence");
  const database = decoded(url.pathname.slice(1), "invalid database name");
  if (!user) throw bad("missing username");
  if (!password) throw bad("missing authentication credentials: required password");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!host) throw bad("missing hostname");
  try {
    const options = url.searchParams.get("options") ?? undefined;
    const routed =
      routeOf(options === undefined ? {} : { options }, undefined, "") ??
      (net.isIP(host) ? undefined : fromHostName(host));
    if (routed) return { target: routed, user, password, database };
    const hacked = fromPassword(password);
    return { target: hacked.target, user, password: hacked.password, database };
  } catch (err) {
    if (err instanceof RoutingError) throw bad(err.message);
    throw err;
  }
}

/** A part of the connection string, percent-decoded; `refusal` names that part when it does not decode. */
function decoded(part: string, refusal: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw bad(refusal);
  }
}

const tooLarge = () => new SqlError(413, `request is too large (max is ${SQL_MAX_BYTES} bytes)`);

/** A body from node's request, read up to the limit (a larger one is left unread: the connection closes). */
function readNodeBody(incoming: IncomingMessage): Promise<string> {
  if (Number(incoming.headers["content-length"] ?? 0) > SQL_MAX_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > SQL_MAX_BYTES) {
        incoming.off("data", onData);
        incoming.pause();
        reject(tooLarge());
      } else chunks.push(chunk);
    };
    incoming.on("data", onData);
    incoming.once("end", () => {
      try {
        resolve(utf8(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
    incoming.once("error", (err) => reject(bad(`could not read the HTTP request body: ${err.message}`)));
  });
}

/** The body of a web Request, read up to the limit. */
async function readBody(request: Request): Promise<string> {
  const declared = request.headers.get("Content-Length");
  if (Number(declared ?? 0) > SQL_MAX_BYTES) throw tooLarge();
  if (!request.body) return "";
  if (declared !== null) {
    let bytes: ArrayBuffer;
    try {
      bytes = await request.arrayBuffer();
    } catch (err) {
      throw bad(`could not read the HTTP request body: ${(err as Error).message}`);
    }
    return utf8(Buffer.from(bytes));
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > SQL_MAX_BYTES) throw tooLarge();
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof SqlError) {
      void reader.cancel().catch(() => {});
      throw err;
    }
    throw bad(`could not read the HTTP request body: ${(err as Error).message}`);
  }
  return utf8(Buffer.concat(chunks));
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A body as text; bytes that are not UTF-8 are the request's error (not turned into U+FFFD). */
function utf8(bytes: Buffer): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw bad("could not parse the HTTP request body: it is not valid UTF-8");
  }
}

/** One query (an object) or a batch (an array), as the proxy's untagged Payload reads them. */
function parsePayload(text: string): QueryData | QueryData[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw bad(`could not parse the HTTP request body: ${(err as Error).message}`);
  }
  const single = queryData(value);
  if (single) return single;
  const queries = (value as { queries?: unknown } | null)?.queries;
  if (Array.isArray(queries)) {
    const batch = queries.map(queryData);
    if (batch.every((q): q is QueryData => q !== undefined)) return batch;
  }
  throw bad("could not parse the HTTP request body: data did not match any variant of untagged enum Payload");
}

function queryData(value: unknown): QueryData | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { query, params = [], arrayMode } = value as Record<string, unknown>;
  if (typeof query !== "string" || !Array.isArray(params)) return undefined;
  if (arrayMode !== undefined && typeof arrayMode !== "boolean") return undefined;
  // The protocol counts parameters in 16 bits.
  if (params.length > MAX_PARAMS)
    throw bad(`too many query parameters: ${params.length} (the most a query takes is ${MAX_PARAMS})`);
  return { query, params, ...(arrayMode === undefined ? {} : { arrayMode }) };
}

/** A JSON parameter as Postgres text (the proxy's json_value_to_pg_text). */
export function paramText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  if (Array.isArray(value)) return arrayLiteral(value);
  return paramJson(value);
}

/** An object parameter's JSON text; one nested past what the stack takes is a 400, not a failure. */
function paramJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError)
      throw bad("a query parameter's objects are nested too deeply to be sent as JSON");
    throw err;
  }
}

const MAX_PARAMS = 65535;
/** Far past Postgres' 6 array dimensions (its own error answers those), short of the stack's end. */
const MAX_ARRAY_NESTING = 100;

function arrayLiteral(values: unknown[], depth = 1): string {
  if (depth > MAX_ARRAY_NESTING)
    throw bad(
      `a query parameter's arrays are nested more than ${MAX_ARRAY_NESTING} deep (Postgres takes 6 dimensions)`,
    );
  const items = values.map((v) => {
    if (v === null || v === undefined) return "NULL";
    if (Array.isArray(v)) return arrayLiteral(v, depth + 1);
    if (typeof v === "boolean" || typeof v === "number") return String(v);
    return JSON.stringify(typeof v === "string" ? v : paramJson(v));
  });
  return `{${items.join(",")}}`;
}

/** Every value as Postgres' text (the serverless driver parses it by type itself). */
const RAW_TYPES = { getTypeParser: () => (value: string) => value };

/** Runs one query (extended protocol, as the proxy does: one statement per query; a console script: simple protocol). */
async function run(
  client: PoolClient,
  address: ComputeAddress,
  data: QueryData,
  format: { raw: boolean; arrayMode: boolean },
): Promise<string> {
  const Query = pg().Query;
  const query = new Query({
    text: data.query,
    values: data.params.map(paramText),
    rowMode: "array",
    types: RAW_TYPES,
    ...(data.script ? {} : { queryMode: "extended" }),
  } as ConstructorParameters<typeof Query>[0]);
  const arrayMode = data.arrayMode ?? format.arrayMode;
  const connection = sessionConnection(client);
  const copying = refuseCopy(connection, query, data.script === true);
  // Each row is kept as its JSON text as it arrives (JavaScript arrays of strings took ~40 times
  // the answer's size), joined ROWS_JOINED at a time; the answer's limit counts that text.
  const rows = new RowsText();
  let tooLarge = false;
  // A row that cannot be written as JSON (a json value nested past what the stack takes) fails the
  // query: the rest of the result is not read (its session ends), and the process goes on.
  let unwritable: SqlError | undefined;
  // A script's statements answer one after another: only the last one's rows are kept.
  let current: QueryResult | undefined;
  let rowText: (row: (string | null)[]) => string = () => "";
  const result = await new Promise<QueryResult>((resolve, reject) => {
    query.on("row", (row: (string | null)[], of?: QueryResult) => {
      if (tooLarge || unwritable || !of) return;
      if (of !== current) {
        current = of;
        rows.clear();
        rowText = rowWriter(of.fields, format.raw, arrayMode);
      }
      let text: string;
      try {
        text = rowText(row);
      } catch (err) {
        unwritable = new SqlError(
          400,
          `a row of the result cannot be returned as JSON: ${err instanceof RangeError ? "a value is nested too deeply" : String(err)}`,
        );
        rows.clear();
        connection.stream.destroy();
        return;
      }
      if (rows.add(text) > SQL_MAX_BYTES) {
        tooLarge = true;
        rows.clear();
        cancel(client, address);
      }
    });
    query.on("end", (results: QueryResult | QueryResult[]) => {
      const last = Array.isArray(results) ? (results[results.length - 1] as QueryResult) : results;
      if (current !== undefined && last !== current) rows.clear();
      resolve(last);
    });
    query.on("error", reject);
    client.query(query);
  }).catch((err: unknown) => {
    if (copying.direction) throw copyRefused(copying.direction);
    if (unwritable) throw unwritable;
    if (tooLarge || oversized.has(connection.stream)) throw responseTooLarge();
    throw err;
  });
  if (tooLarge) throw responseTooLarge();
  // A COPY TO STDOUT of no rows, or a result whose last row could not be written, may end before
  // its session does.
  if (copying.direction) throw copyRefused(copying.direction);
  if (unwritable) throw unwritable;
  const fields = result.fields.map((f) => ({
    name: f.name,
    dataTypeID: f.dataTypeID,
    tableID: f.tableID,
    columnID: f.columnID,
    dataTypeSize: f.dataTypeSize,
    dataTypeModifier: f.dataTypeModifier,
    format: "text",
  }));
  // The proxy's answer, its keys in its order, the rows' text put in as it is.
  return `{"fields":${JSON.stringify(fields)},"rows":${rows.text()},"command":${JSON.stringify(
    result.command ?? "",
  )},"rowCount":${JSON.stringify(result.rowCount ?? null)},"rowAsArray":${arrayMode}}`;
}

/** What a server session's connection (node-postgres' Connection) is used for beyond queries: a COPY's refusal, an end. */
interface SessionConnection {
  stream: net.Socket;
  sendCopyFail(message: string): void;
  sync(): void;
  once(event: "copyOutResponse", listener: () => void): void;
  off(event: "copyOutResponse", listener: () => void): void;
}

/** node-postgres' Connection under a session (not in its public types). */
function sessionConnection(client: PoolClient): SessionConnection {
  return (client as unknown as { connection: SessionConnection }).connection;
}

/**
 * Makes a COPY from or to the client fail the query, as it does on Neon (its proxy's driver takes
 * no COPY messages), and leaves the session fit for the next request. COPY FROM STDIN is failed
 * with CopyFail, and in the extended protocol a Sync: the server, having failed a COPY, skips
 * what follows up to a Sync, and the one sent with the query came during the COPY and was
 * ignored (without it the session waited for good and held its pool's place). COPY TO STDOUT,
 * which cannot be stopped short, ends the session (the pool discards it). `direction` is set once
 * the query turned out to be either.
 */
function refuseCopy(
  connection: SessionConnection,
  query: object,
  simpleProtocol: boolean,
): { direction?: "FROM STDIN" | "TO STDOUT" } {
  const copying: { direction?: "FROM STDIN" | "TO STDOUT" } = {};
  (query as { handleCopyInResponse(c: SessionConnection): void }).handleCopyInResponse = (c) => {
    copying.direction = "FROM STDIN";
    c.sendCopyFail("COPY FROM STDIN is not supported over HTTP");
    if (!simpleProtocol) c.sync();
  };
  const copyOut = () => {
    copying.direction = "TO STDOUT";
    connection.stream.destroy();
  };
  connection.once("copyOutResponse", copyOut);
  const done = () => connection.off("copyOutResponse", copyOut);
  (query as { once(event: string, listener: () => void): void }).once("end", done);
  (query as { once(event: string, listener: () => void): void }).once("error", done);
  return copying;
}

/** Rows' JSON texts joined this many at a time (one string each, not one per row). */
const ROWS_JOINED = 1000;

/** The JSON text of a result's rows, built as they arrive. */
class RowsText {
  private joined: string[] = [];
  private pending: string[] = [];
  private length = 2;

  /** Adds a row's text; returns the length of the whole text so far. */
  add(text: string): number {
    this.pending.push(text);
    this.length += text.length + 1;
    if (this.pending.length === ROWS_JOINED) {
      this.joined.push(this.pending.join(","));
      this.pending = [];
    }
    return this.length;
  }

  clear(): void {
    this.joined = [];
    this.pending = [];
    this.length = 2;
  }

  text(): string {
    if (this.pending.length) this.joined.push(this.pending.join(","));
    this.pending = [];
    return `[${this.joined.join(",")}]`;
  }
}

/** A row of Postgres' text values as the proxy's JSON: typed (unless raw), an array or an object by field name. */
function rowWriter(
  fields: { name: string; dataTypeID: number }[],
  raw: boolean,
  arrayMode: boolean,
): (row: (string | null)[]) => string {
  const convert = fields.map((f) => (raw ? (v: string) => v : typedValue(f.dataTypeID)));
  return (row) => {
    const values = row.map((v, i) => (v === null ? null : (convert[i] as (v: string) => unknown)(v)));
    return JSON.stringify(arrayMode ? values : Object.fromEntries(fields.map((f, i) => [f.name, values[i]])));
  };
}

const CANCELLED = "Query cancelled, connection was terminated";

const copyRefused = (direction: string) =>
  new SqlError(
    400,
    `COPY ${direction} is not supported over HTTP: use a connection over TCP or a WebSocket`,
    {
      code: "0A000",
      severity: "ERROR",
    },
  );

const responseTooLarge = () => new SqlError(507, `response is too large (max is ${SQL_MAX_BYTES} bytes)`);

/** Sockets of server sessions ended for a message larger than a whole response may be. */
const oversized = new WeakSet<net.Socket>();

/**
 * The socket a server session runs over: a message from the server larger than a response may be
 * (a row holding hundreds of MB) ends the session at the message's header, before node-postgres
 * holds any of it (a value past V8's longest string ended the process; one of 300 MB took 28 s
 * and 80 MB of memory to refuse). The request gets 507.
 */
function guardedSocket(): net.Socket {
  const socket = new net.Socket();
  const header = Buffer.alloc(5);
  let held = 0; // bytes of the current message's header seen
  let left = 0; // bytes of the current message's body still to come
  socket.prependListener("data", (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length) {
      if (left > 0) {
        const n = Math.min(left, chunk.length - at);
        left -= n;
        at += n;
        continue;
      }
      const n = Math.min(5 - held, chunk.length - at);
      chunk.copy(header, held, at, at + n);
      held += n;
      at += n;
      if (held < 5) return;
      held = 0;
      left = header.readInt32BE(1) - 4;
      if (left > SQL_MAX_BYTES) {
        oversized.add(socket);
        socket.destroy();
        return;
      }
    }
  });
  return socket;
}

/** Cancels sent for a session, by session: it goes back to its pool once the server has taken them. */
const cancels = new WeakMap<PoolClient, Promise<void>>();

/** Asks the server to stop the query the session runs (a CancelRequest with its key). */
function cancel(client: PoolClient, address: ComputeAddress): void {
  const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
  const keyData = Buffer.alloc(8);
  keyData.writeInt32BE(processID, 0);
  keyData.writeInt32BE(secretKey, 4);
  cancels.set(
    client,
    Promise.all([cancels.get(client), sendCancel(address, keyData)]).then(() => {}),
  );
}

// Built-in array types and their element types (pg_type.typarray), for typed JSON output.
const ARRAY_ELEMENT: Record<number, number> = {
  1000: 16,
  1001: 17,
  1002: 18,
  1003: 19,
  1016: 20,
  1005: 21,
  1006: 22,
  1007: 23,
  1008: 24,
  1009: 25,
  1028: 26,
  1010: 27,
  1011: 28,
  1012: 29,
  1013: 30,
  199: 114,
  143: 142,
  1017: 600,
  1018: 601,
  1019: 602,
  1027: 604,
  629: 628,
  1021: 700,
  1022: 701,
  719: 718,
  791: 790,
  1040: 829,
  1041: 869,
  651: 650,
  1014: 1042,
  1015: 1043,
  1182: 1082,
  1183: 1083,
  1115: 1114,
  1185: 1184,
  1187: 1186,
  1270: 1266,
  1561: 1560,
  1563: 1562,
  1231: 1700,
  2951: 2950,
  3807: 3802,
  3643: 3614,
  3645: 3615,
  2949: 2970,
  3221: 3220,
  4073: 4072,
  1263: 2275,
};

/** Postgres text as the proxy's JSON (pg_text_to_json): typed for bool, int2/4, float4/8, json(b) and arrays. */
function typedValue(type: number): (text: string) => unknown {
  switch (type) {
    case 16:
      return (t) => t === "t";
    case 21:
    case 23:
      return (t) => Number(t);
    case 700:
    case 701:
      return (t) => (t === "NaN" || t === "Infinity" || t === "-Infinity" ? t : Number(t));
    case 114:
    case 3802:
      return (t) => JSON.parse(t);
  }
  const element = ARRAY_ELEMENT[type];
  if (element === undefined) return (t) => t;
  const item = typedValue(element);
  return (t) => parseArray(t, item);
}

function isDatabaseError(err: unknown): err is Error & Record<string, unknown> {
  return err instanceof Error && typeof (err as { code?: unknown }).code === "string" && "severity" in err;
}

function postgresError(err: Error & Record<string, unknown>): SqlError {
  const fields: Record<string, unknown> = {};
  for (const key of ERROR_KEYS) if (key !== "message") fields[key] = err[key] ?? null;
  return new SqlError(400, err.message, fields);
}

function errorBody(err: SqlError): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of ERROR_KEYS)
    body[key] =
      key === "message"
        ? err.message
        : (err.fields[key] ?? (key === "code" || key === "severity" ? "" : null));
  return body;
}

function json(status: number, body: unknown, headers: Record<string, string>): SqlReply {
  return { status, headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) };
}
