import { execFile } from "node:child_process";
import fs from "node:fs";
import nodeHttp from "node:http";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import {
  Client as NeonClient,
  NeonDbError,
  Pool as NeonPool,
  neon,
  neonConfig,
} from "@neondatabase/serverless";
import { sql as dsql } from "drizzle-orm";
import { drizzle as drizzleHttp } from "drizzle-orm/neon-http";
import { drizzle as drizzleWs } from "drizzle-orm/neon-serverless";
import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { Kysely, PostgresDialect } from "kysely";
import { NeonDialect } from "kysely-neon";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import ws from "ws";
import { computeClient, eventually, sendCancelRequest, startComputeServer } from "../helpers/compute.js";
import { http, type RunningServer, randomKey } from "../helpers/server.js";

/**
 * Neon's serverless driver and the pooler against a real server: SQL over HTTP (`POST /sql`) and
 * WebSocket tunnels on the HTTP port, through @neondatabase/serverless itself, Drizzle and Kysely;
 * `-pooler` connections in transaction mode. One server (and its computes) for the file.
 */
let server: RunningServer;
const key = randomKey();
/** Small enough to reach in a test; Neon's (and the default) is 10,000. */
const MAX_POOLED = 1000;

beforeAll(async () => {
  ({ server } = await startComputeServer(key, {
    NEON_EMULATOR_POOLER_MAX_CLIENTS: String(MAX_POOLED),
    NEON_EMULATOR_OPERATION_MS:
      "start_compute=0,suspend_compute=0,create_branch=0,create_timeline=0,apply_config=0",
  }));
  neonConfig.fetchEndpoint = `${server.url}/sql`;
  neonConfig.webSocketConstructor = ws;
  neonConfig.wsProxy = () => `${new URL(server.url).host}/v2`;
  neonConfig.useSecureWebSocket = false;
  const res = await api("POST", "/projects", { project: { name: "serverless" } });
  expect(res.status).toBe(201);
  p = {
    id: res.body.project.id,
    endpointId: res.body.endpoints[0].id,
    role: res.body.roles[0].name,
    password: res.body.roles[0].password,
    uri: res.body.connection_uris[0].connection_uri,
  };
  const pooled = await api(
    "GET",
    `/projects/${p.id}/connection_uri?role_name=${p.role}&database_name=neondb&pooled=true`,
  );
  expect(pooled.status).toBe(200);
  p.pooledUri = pooled.body.uri;
  expect(p.pooledUri).toContain(`endpoint%3D${p.endpointId}-pooler`);
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const run = promisify(execFile);
const api = (method: string, p: string, body?: unknown) => http(server.url, key, method, `/api/v2${p}`, body);

let p: { id: string; endpointId: string; role: string; password: string; uri: string; pooledUri?: string };

/** The protocol messages of node-postgres' connection a custom query sends (its submittable interface). */
interface PgConnection {
  parse(query: { text: string }, more: boolean): void;
  bind(config: object, more: boolean): void;
  execute(config: object, more: boolean): void;
  sync(): void;
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
  stream: net.Socket;
}

/** A raw request to /sql. */
async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/sql`, {
    method: "POST",
    headers: { "Neon-Connection-String": p.uri, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe("SQL over HTTP (neon())", () => {
  it("tagged templates, sql.query, fullResults and arrayMode return what Postgres returns", async () => {
    const sql = neon(p.uri);
    await sql`CREATE TABLE items (id int PRIMARY KEY, name text, tags text[], meta jsonb)`;
    await sql`INSERT INTO items VALUES (${1}, ${"one"}, ${["a", "b"]}, ${JSON.stringify({ x: 1 })})`;
    expect(await sql`SELECT id, name, tags, meta FROM items WHERE id = ${1}`).toEqual([
      { id: 1, name: "one", tags: ["a", "b"], meta: { x: 1 } },
    ]);
    const full = await sql.query("SELECT id, name FROM items", [], { fullResults: true, arrayMode: true });
    expect(full.rows).toEqual([[1, "one"]]);
    expect(full.command).toBe("SELECT");
    expect(full.rowCount).toBe(1);
    expect(full.fields.map((f) => [f.name, f.dataTypeID])).toEqual([
      ["id", 23],
      ["name", 25],
    ]);
    const inserted = await sql.query("INSERT INTO items VALUES (2, 'two'), (3, 'three')", [], {
      fullResults: true,
    });
    expect([inserted.command, inserted.rowCount]).toEqual(["INSERT", 2]);
  });

  it("transaction([...]) runs in one transaction with its options, and an error rolls it all back", async () => {
    const sql = neon(p.uri);
    const [, counted] = await sql.transaction(
      [sql`INSERT INTO items VALUES (10, 'ten')`, sql`SELECT count(*)::int AS n FROM items`],
      { isolationLevel: "Serializable" },
    );
    expect(counted).toEqual([{ n: 4 }]);
    await expect(
      sql.transaction([
        sql`INSERT INTO items VALUES (11, 'eleven')`,
        sql`INSERT INTO items VALUES (10, 'dup')`,
      ]),
    ).rejects.toMatchObject({ name: "NeonDbError", code: "23505", constraint: "items_pkey" });
    expect(await sql`SELECT count(*)::int AS n FROM items WHERE id = 11`).toEqual([{ n: 0 }]);
    const readOnly = sql.transaction([sql`INSERT INTO items VALUES (12, 'x')`], { readOnly: true });
    await expect(readOnly).rejects.toMatchObject({ code: "25006" });
  });

  it("Postgres errors surface as NeonDbError with the SQLSTATE and fields", async () => {
    const sql = neon(p.uri);
    const err = await sql`SELECT nosuch FROM items`.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NeonDbError);
    expect(err).toMatchObject({ code: "42703", severity: "ERROR", position: "8" });
    const wrong = neon(p.uri.replace(`:${p.password}@`, ":wrong@"));
    await expect(wrong`SELECT 1`).rejects.toMatchObject({
      message: `password authentication failed for user '${p.role}'`,
    });
  });

  it("answers the proxy's shapes: typed JSON by default, raw text and arrays on request, batch headers echoed", async () => {
    const q = {
      query: "SELECT 1 AS n, 'a' AS s, '{1,2,3}'::int4[] AS arr, 2::int8 AS big, true AS b, null AS z",
    };
    const typed = await post(q);
    expect(typed.status).toBe(200);
    expect(typed.headers.get("access-control-allow-origin")).toBe("*");
    expect(typed.body.rows).toEqual([{ n: 1, s: "a", arr: [1, 2, 3], big: "2", b: true, z: null }]);
    expect(typed.body.rowAsArray).toBe(false);
    const raw = await post(q, { "Neon-Raw-Text-Output": "true", "Neon-Array-Mode": "true" });
    expect(raw.body.rows).toEqual([["1", "a", "{1,2,3}", "2", "t", null]]);
    const batch = await post(
      {
        queries: [
          { query: "SELECT $1::text AS v", params: [[1, 'a"b', null]] },
          { query: "SELECT 2 AS two" },
        ],
      },
      { "Neon-Batch-Isolation-Level": "RepeatableRead", "Neon-Batch-Read-Only": "true" },
    );
    expect(batch.status).toBe(200);
    expect(batch.body.results.map((r: { rows: unknown[] }) => r.rows)).toEqual([
      [{ v: '{1,"a\\"b",NULL}' }],
      [{ two: 2 }],
    ]);
    expect(batch.headers.get("neon-batch-isolation-level")).toBe("RepeatableRead");
    expect(batch.headers.get("neon-batch-read-only")).toBe("true");
  });

  it("bad requests get the proxy's texts and statuses", async () => {
    const noHeader = await fetch(`${server.url}/sql`, { method: "POST", body: '{"query":"select 1"}' });
    expect(noHeader.status).toBe(400);
    expect(((await noHeader.json()) as { message: string }).message).toBe(
      "invalid header: neon-connection-string",
    );
    expect((await post("not json")).body.message).toMatch(/^could not parse the HTTP request body: /);
    expect((await post({ nothing: 1 })).body.message).toBe(
      "could not parse the HTTP request body: data did not match any variant of untagged enum Payload",
    );
    for (const level of ["Chaos", "constructor", "toString"])
      expect((await post({ query: "SELECT 1" }, { "Neon-Batch-Isolation-Level": level })).body.message).toBe(
        "invalid isolation level",
      );
    const multi = await post({ query: "SELECT 1; SELECT 2" });
    expect([multi.status, multi.body.code]).toEqual([400, "42601"]);
    const unknown = await fetch(`${server.url}/sql`, {
      method: "POST",
      headers: { "Neon-Connection-String": p.uri.replace(p.endpointId, "ep-nothing-here-12345678") },
      body: '{"query":"select 1"}',
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { message: string }).message).toBe(
      `password authentication failed for user '${p.role}'`,
    );
    // A part of the connection string that does not decode is named.
    const url = new URL(p.uri);
    const malformed = async (change: (u: URL) => void) => {
      const bent = new URL(url);
      change(bent);
      const res = await fetch(`${server.url}/sql`, {
        method: "POST",
        headers: { "Neon-Connection-String": bent.href },
        body: '{"query":"select 1"}',
      });
      return [res.status, ((await res.json()) as { message: string }).message];
    };
    expect(await malformed((u) => (u.username = "sp%"))).toEqual([
      400,
      "invalid username: invalid utf-8 sequence",
    ]);
    expect(await malformed((u) => (u.password = "%C3%28"))).toEqual([
      400,
      "invalid password: invalid utf-8 sequence",
    ]);
    expect(await malformed((u) => (u.pathname = "/sp%"))).toEqual([400, "invalid database name"]);
    // Bytes that are not UTF-8, and the connection string sent twice (node would join the two).
    const latin1 = await fetch(`${server.url}/sql`, {
      method: "POST",
      headers: { "Neon-Connection-String": p.uri },
      body: Buffer.from('{"query":"SELECT \'\xe9\'"}', "latin1"),
    });
    expect([latin1.status, ((await latin1.json()) as { message: string }).message]).toEqual([
      400,
      "could not parse the HTTP request body: it is not valid UTF-8",
    ]);
    const twice = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = nodeHttp.request(`${server.url}/sql`, {
        method: "POST",
        headers: { "Neon-Connection-String": [p.uri, p.uri] },
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end('{"query":"select 1"}');
    });
    expect([twice.status, JSON.parse(twice.body).message]).toEqual([
      400,
      "invalid header: neon-connection-string (sent more than once)",
    ]);
    const get = await fetch(`${server.url}/sql`);
    expect([get.status, await get.json()]).toEqual([400, "query is not supported"]);
    const preflight = await fetch(`${server.url}/sql`, { method: "OPTIONS" });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Neon-Connection-String");
    expect(preflight.headers.get("access-control-max-age")).toBe("86400");
  });

  it("a password set with SQL holds on the cleartext paths (/sql, endpoint=…;) as over SCRAM: prepared as Postgres prepares it (SASLprep, or as it is when SASLprep refuses it)", async () => {
    const passwords = {
      // Soft hyphen (mapped to nothing), zero-width space (a space), plain ASCII, and fullwidth
      // letters with a BEL (prohibited: Postgres keeps the password as it is).
      sasl_soft: "\u00adsoft",
      sasl_zero: "zw\u200bsp",
      sasl_plain: "plain-pass",
      sasl_raw: "\uff50\uff41\uff53\uff53\u0007",
    };
    const sql = neon(p.uri);
    for (const [role, password] of Object.entries(passwords))
      await sql.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    for (const [role, password] of Object.entries(passwords)) {
      // The password form of the endpoint's name: the client sends the password in the clear.
      const client = new pg.Client({
        host: "127.0.0.1",
        port: server.pgPort,
        user: role,
        password: `endpoint=${p.endpointId};${password}`,
        database: "neondb",
      });
      await client.connect();
      try {
        expect((await client.query("SELECT current_user AS u")).rows, role).toEqual([{ u: role }]);
      } finally {
        await client.end();
      }
      // node-postgres, which /sql logs in to the compute with, leaves out SASLprep's refusal.
      if (role === "sasl_raw") continue;
      const uri = new URL(p.uri);
      uri.username = role;
      uri.password = encodeURIComponent(password);
      const res = await fetch(`${server.url}/sql`, {
        method: "POST",
        headers: { "Neon-Connection-String": uri.href },
        body: '{"query":"SELECT current_user AS u"}',
      });
      expect([res.status, ((await res.json()) as { rows: unknown[] }).rows], role).toEqual([
        200,
        [{ u: role }],
      ]);
    }
    for (const role of Object.keys(passwords)) await sql.query(`DROP ROLE ${role}`);
  });

  it("limits request and response sizes to 10 MiB (413, 507) and the session stays usable", async () => {
    const big = await post({ query: "SELECT $1::text AS t", params: ["x".repeat(11 * 1024 * 1024)] });
    expect(big.status).toBe(413);
    expect(big.body.message).toBe("request is too large (max is 10485760 bytes)");
    const huge = await post({ query: "SELECT repeat('y', 1024 * 1024) FROM generate_series(1, 12)" });
    expect(huge.status).toBe(507);
    expect(huge.body.message).toBe("response is too large (max is 10485760 bytes)");
    expect((await post({ query: "SELECT 1 AS ok" })).body.rows).toEqual([{ ok: 1 }]);
  });

  it("a response cut off at the size limit cancels its query, and that cancel never lands on another request's query", async () => {
    // The cancel may reach the server after the query has ended: its session goes back to the
    // pool only once the server has taken it (measured before: 10 of 60 such requests cancelled
    // another request's query here).
    let stop = false;
    const others: { status: number; code?: string }[] = [];
    const loops = Array.from({ length: 6 }, async () => {
      while (!stop) {
        const res = await post({ query: "SELECT pg_sleep(0.02)" });
        others.push({ status: res.status, code: res.body.code });
      }
    });
    const cut: number[] = [];
    for (let i = 0; i < 40; i++)
      cut.push((await post({ query: "SELECT repeat('x', 4000000) FROM generate_series(1, 3)" })).status);
    stop = true;
    await Promise.all(loops);
    expect(new Set(cut)).toEqual(new Set([507]));
    expect(others.length).toBeGreaterThan(40);
    expect(others.filter((r) => r.status !== 200)).toEqual([]);
  });

  it("a COPY from or to the client is refused (0A000) and its session goes back clean, however many are sent", async () => {
    const refused = (direction: string) => ({
      status: 400,
      body: {
        code: "0A000",
        message: `COPY ${direction} is not supported over HTTP: use a connection over TCP or a WebSocket`,
      },
    });
    expect((await post({ query: "CREATE TABLE copy_refused (n int)" })).status).toBe(200);
    // More than the pool's 20 sessions: each COPY FROM STDIN had held its session for good.
    for (let i = 0; i < 25; i++)
      expect(await post({ query: "COPY copy_refused FROM STDIN" })).toMatchObject(refused("FROM STDIN"));
    expect((await post({ query: "INSERT INTO copy_refused SELECT generate_series(1, 50000)" })).status).toBe(
      200,
    );
    expect(await post({ query: "COPY copy_refused TO STDOUT" })).toMatchObject(refused("TO STDOUT"));
    expect(await post({ query: "COPY (SELECT 1 WHERE false) TO STDOUT" })).toMatchObject(
      refused("TO STDOUT"),
    );
    // In a batch the refusal rolls the transaction back.
    const batch = await post({
      queries: [{ query: "INSERT INTO copy_refused VALUES (-1)" }, { query: "COPY copy_refused FROM STDIN" }],
    });
    expect(batch).toMatchObject(refused("FROM STDIN"));
    const left = await post({
      query:
        "SELECT (SELECT count(*)::int FROM copy_refused WHERE n = -1) AS batch, " +
        "(SELECT count(*)::int FROM pg_stat_activity WHERE query ILIKE 'COPY%' AND state <> 'idle') AS copying",
    });
    expect(left.body.rows).toEqual([{ batch: 0, copying: 0 }]);
  });

  it("a single value past the response limit is refused at its header (507), and nested or numerous parameters past what Postgres takes get a 400", async () => {
    const big = await post({ query: "SELECT repeat('x', 11 * 1024 * 1024) AS v" });
    expect(big.status).toBe(507);
    expect(big.body.message).toBe("response is too large (max is 10485760 bytes)");
    let nested: unknown = [1];
    for (let i = 0; i < 200; i++) nested = [nested];
    const deep = await post({ query: "SELECT $1::int[] AS a", params: [nested] });
    expect(deep.status).toBe(400);
    expect(deep.body.message).toContain("nested more than 100 deep");
    const many = await post({ query: "SELECT 1", params: Array.from({ length: 70_000 }, () => 1) });
    expect(many.status).toBe(400);
    expect(many.body.message).toBe("too many query parameters: 70000 (the most a query takes is 65535)");
    expect((await post({ query: "SELECT 1 AS ok" })).body.rows).toEqual([{ ok: 1 }]);
  });

  it("a json value or an object parameter nested past what the stack takes is a 400, and the emulator goes on", async () => {
    // JSON.stringify of such a row had thrown inside node-postgres' data handler and ended the process.
    for (let i = 0; i < 2; i++) {
      const nested = await post({ query: "SELECT (repeat('[', 5000) || repeat(']', 5000))::json AS j" });
      expect(nested.status).toBe(400);
      expect(nested.body.message).toBe(
        "a row of the result cannot be returned as JSON: a value is nested too deeply",
      );
    }
    const deep = `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`;
    for (const params of [`[${deep}]`, `[[${deep}]]`]) {
      const res = await post(`{"query":"SELECT $1::text AS t","params":${params}}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe("a query parameter's objects are nested too deeply to be sent as JSON");
    }
    expect((await post({ query: "SELECT 1 AS ok" })).body.rows).toEqual([{ ok: 1 }]);
    expect((await fetch(`${server.url}/_emulator/health`)).status).toBe(200);
  });

  it("a query whose server session ends under it (pg_terminate_backend, a suspend) gets 57P01, and the emulator goes on", async () => {
    const self = await post({ query: "SELECT pg_terminate_backend(pg_backend_pid())" });
    expect(self.status).toBe(400);
    expect(self.body.code).toBe("57P01");
    expect((await post({ query: "SELECT 1 AS ok" })).body.rows).toEqual([{ ok: 1 }]);
    const sleeping = post({ query: "SELECT pg_sleep(10)" });
    await new Promise((r) => setTimeout(r, 500));
    expect((await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/suspend`)).status).toBe(200);
    expect(await sleeping).toMatchObject({ status: 400, body: { code: "57P01" } });
    expect((await fetch(`${server.url}/_emulator/health`)).status).toBe(200);
    // The next query wakes the compute again.
    expect((await post({ query: "SELECT 2 AS ok" })).body.rows).toEqual([{ ok: 2 }]);
  });

  it("a client that goes away mid-batch has its query cancelled and the batch rolled back", async () => {
    const abort = new AbortController();
    const request = fetch(`${server.url}/sql`, {
      method: "POST",
      headers: { "Neon-Connection-String": p.uri },
      body: JSON.stringify({
        queries: [{ query: "INSERT INTO items VALUES (40, 'abandoned')" }, { query: "SELECT pg_sleep(10)" }],
      }),
      signal: abort.signal,
    }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 400));
    abort.abort();
    await request;
    let left = -1;
    for (let i = 0; i < 100 && left !== 0; i++) {
      left = (
        await post({ query: "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep'" })
      ).body.rows[0].n;
      if (left) await new Promise((r) => setTimeout(r, 50));
    }
    expect(left).toBe(0);
    expect((await post({ query: "SELECT count(*)::int AS n FROM items WHERE id = 40" })).body.rows).toEqual([
      { n: 0 },
    ]);
  });

  it("a request whose client left while it waited for a server session runs nothing", async () => {
    expect((await post({ query: "CREATE TABLE IF NOT EXISTS left_waiting (n int)" })).status).toBe(200);
    // Every session of the pool (20) busy for a while.
    const busy = Array.from({ length: 20 }, () => post({ query: "SELECT pg_sleep(2)" }));
    await new Promise((r) => setTimeout(r, 300));
    const abort = new AbortController();
    const request = fetch(`${server.url}/sql`, {
      method: "POST",
      headers: { "Neon-Connection-String": p.uri },
      body: JSON.stringify({ query: "INSERT INTO left_waiting VALUES (41)" }),
      signal: abort.signal,
    }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    abort.abort();
    await request;
    expect((await Promise.all(busy)).map((r) => r.status)).toEqual(busy.map(() => 200));
    await new Promise((r) => setTimeout(r, 300));
    expect((await post({ query: "SELECT count(*)::int AS n FROM left_waiting" })).body.rows).toEqual([
      { n: 0 },
    ]);
  });

  it("an answer of many small rows takes memory in proportion to its size", async () => {
    const rss = () =>
      Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.proc.pid}/status`, "utf8"))?.[1]) / 1024;
    // Warm: the process's heap grown by what came before.
    expect((await post({ query: "SELECT 1 AS n FROM generate_series(1, 1000)" })).status).toBe(200);
    const before = rss();
    let peak = before;
    const sample = setInterval(() => {
      peak = Math.max(peak, rss());
    }, 20);
    try {
      // ~1.5 million rows: 9.6 MB of JSON in array mode, 18 MB as objects (507).
      const many = "SELECT 1 AS n FROM generate_series(1, 1500000)";
      const arrays = await post({ query: many }, { "Neon-Array-Mode": "true" });
      expect(arrays.status).toBe(200);
      expect(arrays.body.rows).toHaveLength(1_500_000);
      expect((await post({ query: many })).status).toBe(507);
    } finally {
      clearInterval(sample);
    }
    // Held as JavaScript arrays of strings, such an answer took ~40 times its size (400 MB).
    expect(peak - before).toBeLessThan(150);
  }, 60_000);

  it("wakes an idle endpoint, recording a start_compute", async () => {
    expect((await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/suspend`)).status).toBe(200);
    for (let i = 0; i < 200; i++) {
      const e = await api("GET", `/projects/${p.id}/endpoints/${p.endpointId}`);
      if (e.body.endpoint.current_state === "idle" && !e.body.endpoint.pending_state) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await neon(p.uri)`SELECT count(*)::int AS n FROM items`).toEqual([{ n: 4 }]);
    const ops = await api("GET", `/projects/${p.id}/operations`);
    expect(ops.body.operations[0]).toMatchObject({ action: "start_compute", status: "finished" });
  });
});

describe("WebSocket tunnels (Pool and Client)", () => {
  it("Pool runs an interactive transaction over the WebSocket, with the driver's pipelined login", async () => {
    const pool = new NeonPool({ connectionString: p.uri });
    try {
      const client = await pool.connect();
      await client.query("BEGIN");
      await client.query("INSERT INTO items VALUES (20, 'ws')");
      expect((await client.query("SELECT name FROM items WHERE id = 20")).rows).toEqual([{ name: "ws" }]);
      await client.query("ROLLBACK");
      client.release();
      expect((await pool.query("SELECT count(*)::int AS n FROM items WHERE id = 20")).rows).toEqual([
        { n: 0 },
      ]);
      const err = await pool.query("SELECT 1/0").catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "22012" });
    } finally {
      await pool.end();
    }
  });

  it("routes by the host the tunnel was asked for (?address=) and refuses a wrong password", async () => {
    const host = `${p.endpointId}.c-2.us-east-2.aws.neon.tech`;
    const proxy = neonConfig.wsProxy;
    neonConfig.wsProxy = (h, port) => `${new URL(server.url).host}/v2?address=${h}:${port}`;
    const pool = new NeonPool({ connectionString: `postgresql://${p.role}:${p.password}@${host}/neondb` });
    try {
      expect((await pool.query("SELECT current_user AS u")).rows).toEqual([{ u: p.role }]);
    } finally {
      await pool.end();
      neonConfig.wsProxy = proxy;
    }
    const wrong = new NeonPool({ connectionString: p.uri.replace(`:${p.password}@`, ":nope@") });
    await expect(wrong.query("SELECT 1")).rejects.toThrow(
      `password authentication failed for user '${p.role}'`,
    );
    await wrong.end();
  });

  it("a text frame, garbage bytes or a tunnel closed mid-startup end that tunnel only", async () => {
    const url = `${server.url.replace("http", "ws")}/v2`;
    const closed = (socket: ws) =>
      new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
    const text = new ws(url);
    await new Promise((r) => text.on("open", r));
    const textClosed = closed(text);
    text.send("hello");
    expect(await textClosed).toBe(1003);
    const garbage = new ws(url);
    await new Promise((r) => garbage.on("open", r));
    const answer = new Promise<Buffer>((resolve) => garbage.on("message", (d) => resolve(d as Buffer)));
    garbage.send(Buffer.from([0x7f, 0xff, 0xff, 0xff, 0xde, 0xad, 0xbe, 0xef]));
    expect((await answer).toString("latin1")).toContain("08P01");
    const half = new ws(url);
    await new Promise((r) => half.on("open", r));
    half.send(Buffer.from([0, 0, 0, 40, 0, 3]));
    half.terminate();
    // A message past 1 MiB before the login closes the tunnel at its frame's header (1009).
    const big = new ws(url);
    await new Promise((r) => big.on("open", r));
    const bigClosed = closed(big);
    big.send(Buffer.alloc(2 * 1024 * 1024));
    expect(await bigClosed).toBe(1009);
    // An upgrade whose request target no URL parser takes is a 400, not the end of the process.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(server.url).port), "127.0.0.1");
      let got = "";
      socket.on("data", (d) => {
        got += d.toString("latin1");
      });
      socket.on("close", () => resolve(got));
      socket.on("error", reject);
      socket.write(
        "GET http://[/v2 HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
      );
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    expect((await http(server.url, key, "GET", "/_emulator/health")).status).toBe(200);
    expect(await neon(p.uri)`SELECT 1 AS one`).toEqual([{ one: 1 }]);
  });
});

describe("ORMs and query builders", () => {
  const notes = pgTable("notes", { id: integer("id").primaryKey(), body: text("body").notNull() });

  it("Drizzle over neon-http and neon-serverless", async () => {
    const http = drizzleHttp(neon(p.uri));
    await http.execute(dsql`CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)`);
    await http.insert(notes).values([{ id: 1, body: "first" }]);
    expect(await http.select().from(notes)).toEqual([{ id: 1, body: "first" }]);
    const pool = new NeonPool({ connectionString: p.uri });
    const db = drizzleWs(pool);
    await db
      .transaction(async (tx) => {
        await tx.insert(notes).values({ id: 2, body: "second" });
        expect((await tx.select().from(notes)).length).toBe(2);
        tx.rollback();
      })
      .catch((e: unknown) => expect((e as Error).message).toBe("Rollback"));
    expect((await db.select().from(notes)).map((n) => n.id)).toEqual([1]);
    await pool.end();
  });

  it("Kysely with kysely-neon's NeonDialect (HTTP) and with the serverless Pool (WebSocket)", async () => {
    interface Db {
      notes: { id: number; body: string };
    }
    await neon(p.uri)`CREATE TABLE IF NOT EXISTS notes (id int PRIMARY KEY, body text NOT NULL)`;
    const overHttp = new Kysely<Db>({ dialect: new NeonDialect({ neon: neon(p.uri) }) });
    await overHttp.insertInto("notes").values({ id: 3, body: "third" }).execute();
    expect(await overHttp.selectFrom("notes").select("body").where("id", "=", 3).execute()).toEqual([
      { body: "third" },
    ]);
    const overWs = new Kysely<Db>({
      dialect: new PostgresDialect({ pool: new NeonPool({ connectionString: p.uri }) }),
    });
    const count = await overWs.transaction().execute(async (trx) => {
      await trx.deleteFrom("notes").where("id", "=", 3).execute();
      return trx
        .selectFrom("notes")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .executeTakeFirstOrThrow();
    });
    expect(Number(count.n)).toBe(1);
    await overWs.destroy();
  });
});

describe("Prisma", () => {
  it("@prisma/adapter-neon over the WebSocket tunnel: a client generated offline, queries and an interactive transaction", async () => {
    // `prisma generate` needs no engine binary (the query compiler is WebAssembly), but the CLI
    // looks for one first; any existing file satisfies it. `prisma migrate` would run that binary,
    // which only binaries.prisma.sh serves: the table is made with SQL.
    const root = path.resolve(import.meta.dirname, "../..");
    await run(
      process.execPath,
      [
        path.join(root, "node_modules/prisma/build/index.js"),
        "generate",
        "--schema",
        path.join(root, "test/fixtures/prisma/schema.prisma"),
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
          CHECKPOINT_DISABLE: "1",
          PRISMA_HIDE_UPDATE_MESSAGE: "1",
        },
      },
    );
    await neon(p.uri)`CREATE TABLE "PrismaNote" (id serial PRIMARY KEY, body text NOT NULL)`;
    const { PrismaNeon } = await import("@prisma/adapter-neon");
    const generated = path.join(root, "test/.generated/prisma/index.js");
    const { PrismaClient } = (await import(generated)) as {
      PrismaClient: new (options: {
        adapter: unknown;
      }) => {
        prismaNote: {
          create(args: { data: { body: string } }): Promise<{ id: number; body: string }>;
          findMany(): Promise<{ id: number; body: string }[]>;
          count(): Promise<number>;
        };
        $transaction<T>(
          work: (tx: {
            prismaNote: { create(args: { data: { body: string } }): Promise<unknown> };
          }) => Promise<T>,
        ): Promise<T>;
        $disconnect(): Promise<void>;
      };
    };
    const prisma = new PrismaClient({ adapter: new PrismaNeon({ connectionString: p.uri }) });
    try {
      expect(await prisma.prismaNote.create({ data: { body: "from prisma" } })).toEqual({
        id: 1,
        body: "from prisma",
      });
      await expect(
        prisma.$transaction(async (tx) => {
          await tx.prismaNote.create({ data: { body: "rolled back" } });
          throw new Error("undo");
        }),
      ).rejects.toThrow("undo");
      expect(await prisma.prismaNote.findMany()).toEqual([{ id: 1, body: "from prisma" }]);
      expect(await neon(p.uri)`SELECT count(*)::int AS n FROM "PrismaNote"`).toEqual([{ n: 1 }]);
    } finally {
      await prisma.$disconnect();
    }
  }, 60_000);
});

describe("the pooler (transaction mode)", () => {
  const pooledClient = (options: pg.ClientConfig = {}) =>
    new pg.Client({ connectionString: p.pooledUri, ...options });
  /** An API change, tried again while the branch is locked (the project's own operations, when a test runs alone). */
  const unlocked = async (method: string, path: string, body: unknown) => {
    for (let tries = 0; ; tries++) {
      const res = await api(method, path, body);
      if (res.status !== 423 || tries === 100) return res;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** The pooled connection string, logged in as `role`. */
  const pooledUriAs = (role: string, password: string) => {
    const uri = new URL(p.pooledUri as string);
    uri.username = role;
    uri.password = password;
    return uri;
  };
  /** A role made through the API on the project's first branch (its clients get a pool of their own). */
  const roleOfItsOwn = async (name: string) => {
    const { allSettled } = computeClient(() => server, key);
    const branches = await api("GET", `/projects/${p.id}/branches`);
    const base = `/projects/${p.id}/branches/${branches.body.branches[0].id}`;
    const made = await unlocked("POST", `${base}/roles`, { role: { name } });
    await allSettled(p.id, made.body.operations);
    return {
      uri: pooledUriAs(name, made.body.role.password),
      drop: async () =>
        allSettled(p.id, (await unlocked("DELETE", `${base}/roles/${name}`, undefined)).body.operations),
    };
  };

  it("1,000 concurrent pooled clients share at most 0.9 × max_connections server sessions of a 0.25 CU compute; one more gets PgBouncer's FATAL 08P01", async () => {
    const clients = Array.from({ length: MAX_POOLED }, (_, i) =>
      pooledClient({ application_name: `app${i % 4}` }),
    );
    const direct = new pg.Client({ connectionString: p.uri });
    await direct.connect();
    const sessions = async () =>
      (
        await direct.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        )
      ).rows[0].n as number;
    const before = await sessions();
    try {
      for (let i = 0; i < clients.length; i += 100)
        await Promise.all(clients.slice(i, i + 100).map((c) => c.connect()));
      await Promise.all(
        clients.map(async (c, i) => {
          const r = await c.query(
            "SELECT $1::int AS i, current_setting('application_name') AS app, pg_sleep(0.01)",
            [i],
          );
          expect(r.rows[0]).toMatchObject({ i, app: `app${i % 4}` });
        }),
      );
      const pooled = (await sessions()) - before;
      expect(pooled).toBeGreaterThan(1);
      expect(pooled).toBeLessThanOrEqual(Math.floor(0.9 * 112));
      const extra = pooledClient();
      await expect(extra.connect()).rejects.toMatchObject({
        code: "08P01",
        severity: "FATAL",
        message: "no more connections allowed (max_client_conn)",
      });
      await extra.end().catch(() => {});
    } finally {
      await direct.end();
      await Promise.all(clients.map((c) => c.end().catch(() => {})));
    }
  }, 120_000);

  it("clients holding transactions open do not starve the others: the pool opens a session for each that waits", async () => {
    // A pool of its own (another database): the test above left the first one's sessions idle.
    const uri = new URL(p.pooledUri as string);
    uri.pathname = "/postgres";
    const holders = Array.from({ length: 12 }, () => pooledClient({ connectionString: uri.href }));
    const late = pooledClient({ connectionString: uri.href });
    try {
      const pids = new Set<number>();
      for (const c of holders) {
        await c.connect();
        await c.query("BEGIN");
        pids.add((await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid);
      }
      expect(pids.size).toBe(holders.length);
      await late.connect();
      const pid = (await late.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      expect(pids.has(pid)).toBe(false);
    } finally {
      await Promise.all([...holders, late].map((c) => c.end().catch(() => {})));
    }
  });

  it("a named prepared statement follows its client to another server session (as PgBouncer's max_prepared_statements)", async () => {
    const a = pooledClient();
    const b = pooledClient();
    await a.connect();
    await b.connect();
    try {
      const named = (v: number) =>
        a.query({ name: "pid-and-value", text: "SELECT pg_backend_pid() AS pid, $1::int AS v", values: [v] });
      const first = (await named(1)).rows[0];
      // b holds the session a just gave back (the most recently returned is lent first).
      await b.query("BEGIN");
      const held = (await b.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      const second = (await named(2)).rows[0];
      expect(first.v).toBe(1);
      expect(second.v).toBe(2);
      expect(held).toBe(first.pid);
      expect(second.pid).not.toBe(first.pid);
      await b.query("COMMIT");
      // A statement error inside a pipeline leaves the pooler's bookkeeping in step.
      await expect(a.query({ name: "broken", text: "SELECT nosuch", values: [] })).rejects.toMatchObject({
        code: "42703",
      });
      expect((await named(3)).rows[0].v).toBe(3);
      await a.query("DEALLOCATE ALL");
      expect((await a.query("SELECT 4 AS v")).rows).toEqual([{ v: 4 }]);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it("a server session keeps at most 1,000 of the pool's prepared statements, closing the least recently used, which is prepared again when next used", async () => {
    const c = pooledClient();
    await c.connect();
    try {
      for (let i = 0; i <= 1004; i++) await c.query({ name: `s${i}`, text: `SELECT ${i}::int AS v` });
      await c.query("BEGIN");
      const held = await c.query(
        "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'PGBOUNCER_%'",
      );
      await c.query("COMMIT");
      expect(held.rows).toEqual([{ n: 1000 }]);
      expect((await c.query({ name: "s0", text: "SELECT 0::int AS v" })).rows).toEqual([{ v: 0 }]);
      // A Parse that fails makes Postgres skip the Close of the statement it evicts (s6 now): that
      // one stays prepared there, and runs when next used.
      await expect(c.query({ name: "bad", text: "SELEC 1" })).rejects.toMatchObject({ code: "42601" });
      expect((await c.query({ name: "s6", text: "SELECT 6::int AS v" })).rows).toEqual([{ v: 6 }]);
    } finally {
      await c.end();
    }
  }, 60_000);

  it("an extended-protocol COPY FROM STDIN (a Sync sent during copy-in, as libpq pipelines it, or the whole copy at once) gives its session back at its end", async () => {
    const a = pooledClient();
    const b = pooledClient();
    await a.connect();
    await b.connect();
    /**
     * Parse, Bind, Execute, Sync; then the row, CopyDone and Sync: Postgres skips the first Sync
     * (copy-in ignores it) and answers one ReadyForQuery. As libpq does, the row goes once the
     * CopyInResponse came; `atOnce`: all in one write before it can.
     */
    const copy = (atOnce: boolean) =>
      new Promise<void>((resolve, reject) => {
        const rows = (connection: PgConnection) => {
          connection.sendCopyFromChunk(Buffer.from("copied\n"));
          connection.endCopyFrom();
          connection.sync();
        };
        const submittable = {
          submit(connection: PgConnection) {
            if (atOnce) connection.stream.cork();
            connection.parse({ text: "COPY copied FROM STDIN" }, false);
            connection.bind({}, false);
            connection.execute({}, false);
            connection.sync();
            if (atOnce) {
              rows(connection);
              process.nextTick(() => connection.stream.uncork());
            }
          },
          handleCopyInResponse(connection: PgConnection) {
            if (!atOnce) rows(connection);
          },
          handleCommandComplete() {},
          handleReadyForQuery: () => resolve(),
          handleError: (err: Error) => reject(err),
        };
        a.query(submittable as unknown as pg.QueryConfig);
      });
    try {
      await a.query("CREATE TABLE IF NOT EXISTS copied (v text)");
      for (const atOnce of [false, true]) {
        await copy(atOnce);
        const pid = (await a.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
        // The session a gave back last is the next one lent.
        expect((await b.query("SELECT pg_backend_pid() AS pid")).rows[0].pid, `at once: ${atOnce}`).toBe(pid);
      }
      expect((await b.query("SELECT count(*)::int AS n FROM copied")).rows).toEqual([{ n: 2 }]);
      await b.query("DROP TABLE copied");
    } finally {
      await a.end();
      await b.end();
    }
  });

  it("a pooled client connecting as soon as its project is made is served once the compute starts: the start setting the role's password ends no client", async () => {
    const res = await api("POST", "/projects", { project: { name: "pooled-at-once" } });
    expect(res.status).toBe(201);
    const project = res.body.project.id;
    const uri = await api(
      "GET",
      `/projects/${project}/connection_uri?role_name=${res.body.roles[0].name}&database_name=neondb&pooled=true`,
    );
    const c = new pg.Client({ connectionString: uri.body.uri });
    await c.connect();
    try {
      for (let i = 0; i < 5; i++)
        expect((await c.query("SELECT $1::int AS n", [i])).rows).toEqual([{ n: i }]);
    } finally {
      await c.end();
    }
    expect((await api("DELETE", `/projects/${project}`)).status).toBe(200);
  });

  it("a pooled client's Parse and Bind of the unnamed statement pass through as they come: a 150 MB parameter is not held in the emulator's memory", async () => {
    const rss = () => {
      const status = fs.readFileSync(`/proc/${server.proc.pid}/status`, "utf8");
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) * 1024;
    };
    const c = pooledClient();
    await c.connect();
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rss());
    }, 10);
    try {
      const big = Buffer.alloc(150 * 1024 * 1024, 7);
      const rows = (await c.query("SELECT length($1::bytea) AS n", [big])).rows;
      expect(rows).toEqual([{ n: big.length }]);
      // Named statements still get the pool's names.
      expect(
        (await c.query({ name: "after_big", text: "SELECT $1::int + 1 AS n", values: [1] })).rows,
      ).toEqual([{ n: 2 }]);
    } finally {
      clearInterval(sampler);
      await c.end();
    }
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);

  it("a pooled client is held back with its server session: a slow reader leaves the rest of its result in Postgres, a fast COPY waits for the server's reads", async () => {
    const direct = new pg.Client({ connectionString: p.uri });
    await direct.connect();
    const reader = pooledClient();
    const other = pooledClient();
    const writer = pooledClient();
    await Promise.all([reader.connect(), other.connect(), writer.connect()]);
    const waitEventOf = async (marker: string) =>
      (
        await direct.query(
          "SELECT wait_event FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()",
          [`%${marker}%`],
        )
      ).rows[0]?.wait_event;
    try {
      // ~100 MB of rows to a client that stops reading: Postgres waits to write (ClientWrite).
      let rows = 0;
      const big = reader.query(
        new pg.Query("SELECT repeat('x', 1000) AS slow_reader FROM generate_series(1, 100000)"),
      );
      big.on("row", () => rows++);
      const read = new Promise((resolve, reject) => big.on("end", resolve).on("error", reject));
      const readerStream = (reader as unknown as { connection: PgConnection }).connection.stream;
      readerStream.pause();
      let waiting: string | undefined;
      for (let i = 0; i < 200 && waiting !== "ClientWrite"; i++) {
        waiting = await waitEventOf("AS slow_reader");
        if (waiting !== "ClientWrite") await new Promise((r) => setTimeout(r, 50));
      }
      expect(waiting).toBe("ClientWrite");
      // And stays so (a pooler reading on would take the whole result in a second or two).
      await new Promise((r) => setTimeout(r, 1500));
      expect(await waitEventOf("AS slow_reader")).toBe("ClientWrite");
      // The session is the slow client's alone: the others go on.
      expect((await other.query("SELECT 1 AS n")).rows).toEqual([{ n: 1 }]);
      readerStream.resume();
      await read;
      expect(rows).toBe(100_000);

      // A COPY of 64 MB into a table another session has locked: the client can hand over only
      // what the sockets between it and Postgres hold (a few MB) until the lock goes.
      await direct.query("CREATE TABLE copied_fast (v text)");
      await direct.query("BEGIN");
      await direct.query("LOCK TABLE copied_fast IN ACCESS EXCLUSIVE MODE");
      const chunk = Buffer.from(`${"y".repeat(1023)}\n`.repeat(64));
      const copyData = Buffer.alloc(5);
      copyData[0] = 0x64; // CopyData
      copyData.writeInt32BE(4 + chunk.length, 1);
      const chunks = 1024;
      let sent = 0;
      const copied = new Promise<void>((resolve, reject) => {
        const submittable = {
          submit(connection: PgConnection) {
            connection.query("COPY copied_fast FROM STDIN");
            const pump = () => {
              while (sent < chunks) {
                sent++;
                if (!connection.stream.write(Buffer.concat([copyData, chunk]))) {
                  connection.stream.once("drain", pump);
                  return;
                }
              }
              connection.endCopyFrom();
            };
            pump();
          },
          handleCopyInResponse() {},
          handleCommandComplete() {},
          handleReadyForQuery: () => resolve(),
          handleError: (err: Error) => reject(err),
        };
        writer.query(submittable as unknown as pg.QueryConfig);
      });
      await new Promise((r) => setTimeout(r, 1500));
      expect(sent * chunk.length).toBeLessThan(24 * 1024 * 1024);
      await direct.query("COMMIT");
      await copied;
      expect((await direct.query("SELECT count(*)::int AS n FROM copied_fast")).rows).toEqual([
        { n: chunks * 64 },
      ]);
    } finally {
      await direct.query("ROLLBACK").catch(() => {});
      await direct.query("DROP TABLE IF EXISTS copied_fast");
      await direct.end();
      await Promise.all([reader.end(), other.end(), writer.end()]);
    }
  }, 60_000);

  it("a pooled client holds no server session with part of a message, and one that vanishes after half a message has its session closed once what it sent has run", async () => {
    const streamOf = (c: pg.Client) => (c as unknown as { connection: PgConnection }).connection.stream;
    // More clients than the pool has sessions (0.9 × 112), each with one byte of a Query sent.
    const partial = await Promise.all(
      Array.from({ length: 110 }, async () => {
        const c = pooledClient();
        c.on("error", () => {});
        await c.connect();
        streamOf(c).write(Buffer.from("Q"));
        return c;
      }),
    );
    const other = pooledClient();
    await other.connect();
    const answered = other.query("SELECT 1 AS n");
    const late = new Promise((r) => setTimeout(() => r("no answer in 10 s"), 10_000));
    expect(await Promise.race([answered.then((r) => r.rows), late])).toEqual([{ n: 1 }]);
    await other.end();
    for (const c of partial) streamOf(c).destroy();

    // A whole query, then half of the next message, and the client is gone: the query runs to its
    // end (as Postgres runs what a client sent before it left), and its session is closed, not
    // lent again with half a message in it.
    const direct = new pg.Client({ connectionString: p.uri });
    await direct.connect();
    const backends = async () =>
      (
        await direct.query(
          "SELECT pid, query LIKE '%AS half_sent%' AS sent, state FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        )
      ).rows as { pid: number; sent: boolean; state: string }[];
    const vanishing = pooledClient();
    vanishing.on("error", () => {});
    await vanishing.connect();
    const text = Buffer.from("SELECT pg_sleep(1) AS half_sent\0");
    const head = Buffer.alloc(5);
    head[0] = 0x51;
    head.writeInt32BE(4 + text.length, 1);
    streamOf(vanishing).write(Buffer.concat([head, text, Buffer.from("Q\0\0")]));
    await eventually(async () => (await backends()).some((b) => b.sent && b.state === "active"));
    const pid = (await backends()).find((b) => b.sent)?.pid;
    streamOf(vanishing).destroy();
    await eventually(async () => !(await backends()).some((b) => b.pid === pid));
    await direct.end();
  }, 60_000);

  it("a message cut anywhere between writes, in its header or its body, reaches a session whole when the one before gave its session back", async () => {
    const msg = (type: string, ...parts: Buffer[]) => {
      const body = Buffer.concat(parts);
      const head = Buffer.alloc(5);
      head.write(type, 0, "latin1");
      head.writeInt32BE(4 + body.length, 1);
      return Buffer.concat([head, body]);
    };
    const cstr = (text: string) => Buffer.from(`${text}\0`);
    const int16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
    const query = (sql: string) => msg("Q", cstr(sql));
    const extended = (sql: string) =>
      Buffer.concat([
        msg("P", cstr(""), cstr(sql), int16(0)),
        msg("B", cstr(""), cstr(""), int16(0), int16(0), int16(0)),
        msg("E", cstr(""), Buffer.alloc(4)),
        msg("S"),
      ]);
    const c = pooledClient();
    c.on("error", () => {});
    await c.connect();
    const stream = (c as unknown as { connection: PgConnection }).connection.stream;
    stream.removeAllListeners("data");
    let got = Buffer.alloc(0);
    stream.on("data", (d: Buffer) => {
      got = Buffer.concat([got, d]);
    });
    /** The values of the DataRows received, once `readies` ReadyForQuery messages have come. */
    const answers = async (readies: number): Promise<string[]> => {
      for (let i = 0; i < 200; i++) {
        const values: string[] = [];
        let z = 0;
        for (let at = 0; at + 5 <= got.length; ) {
          const length = got.readInt32BE(at + 1);
          if (at + 1 + length > got.length) break;
          if (got[at] === 0x5a) z++;
          if (got[at] === 0x44) values.push(got.subarray(at + 11, at + 1 + length).toString());
          at += 1 + length;
        }
        if (z >= readies) return values;
        await new Promise((r) => setTimeout(r, 50));
      }
      return ["no ReadyForQuery in 10 s"];
    };
    const other = pooledClient();
    await other.connect();
    let readies = 0;
    const expected: string[] = [];
    let n = 0;
    for (const [form, cuts] of [
      [query, [1, 3, 4, 5, 9]],
      [extended, [3, 10, 30, 35, 44]],
    ] as const) {
      for (const cut of cuts) {
        const first = form(`SELECT ${++n}`);
        const second = form(`SELECT ${++n}`);
        stream.write(Buffer.concat([first, second.subarray(0, cut)]));
        expect(await answers(++readies)).toEqual([...expected, String(n - 1)]);
        // The first's ReadyForQuery gave the session back, unless part of the second is on it; another
        // client takes a session meanwhile; the rest of the second comes now.
        expect((await other.query("SELECT 0 AS zero")).rows).toEqual([{ zero: 0 }]);
        stream.write(second.subarray(cut));
        expected.push(String(n - 1), String(n));
        expect(await answers(++readies), `${form === query ? "Query" : "Parse…Sync"} cut at ${cut}`).toEqual(
          expected,
        );
      }
    }
    stream.destroy();
    await other.end();
  }, 60_000);

  it("the settings PgBouncer tracks stay each client's: a SET one client left on a session is undone for the next; startup values of any case hold", async () => {
    const show =
      "SELECT current_setting('TimeZone') AS tz, current_setting('DateStyle') AS ds, current_setting('application_name') AS app";
    const fresh = pooledClient();
    await fresh.connect();
    const defaults = (await fresh.query(show)).rows[0];
    await fresh.end();
    expect(defaults.tz).not.toBe("America/New_York");
    const a = pooledClient();
    await a.connect();
    try {
      await a.query("SET TimeZone = 'America/New_York'");
      await a.query("SET DateStyle = 'SQL, DMY'");
      await a.query("SET application_name = 'client-a'");
      for (let i = 0; i < 5; i++) {
        const b = pooledClient();
        await b.connect();
        expect((await b.query(show)).rows[0]).toEqual(defaults);
        await b.end();
        // a's own settings follow it to whichever session it gets.
        expect((await a.query(show)).rows[0]).toEqual({
          tz: "America/New_York",
          ds: "SQL, DMY",
          app: "client-a",
        });
      }
      // libpq sends PGTZ as `timezone`: the client keeps it.
      const { stdout } = await run("psql", [p.pooledUri as string, "-tAc", "SHOW TimeZone"], {
        env: { ...process.env, PGTZ: "Asia/Tokyo" },
      });
      expect(stdout.trim()).toBe("Asia/Tokyo");
    } finally {
      await a.end();
    }
  });

  it("tracked settings are set on a session whatever its standard_conforming_strings, and an application_name Postgres cuts is set once, not before every transaction", async () => {
    // A pool of its own, whose one session each client below takes in turn.
    const role = await roleOfItsOwn("escapes");
    const uri = role.uri;
    const pooledAs = (config: pg.ClientConfig) =>
      new pg.Client({
        host: uri.hostname,
        port: Number(uri.port),
        user: "escapes",
        password: decodeURIComponent(uri.password),
        database: uri.pathname.slice(1),
        ...config,
        options: `${uri.searchParams.get("options")} -c standard_conforming_strings=off`,
      });
    const appName = async (config: pg.ClientConfig) => {
      const c = pooledAs(config);
      const notices: string[] = [];
      c.on("notice", (n) => notices.push(n.message ?? ""));
      await c.connect();
      try {
        const names: string[] = [];
        for (let i = 0; i < 20; i++)
          names.push((await c.query("SELECT current_setting('application_name') AS app")).rows[0].app);
        return { names: [...new Set(names)], notices };
      } finally {
        await c.end();
      }
    };
    // The first leaves its session with standard_conforming_strings off, where '\t' is a tab.
    expect(await appName({ application_name: "first" })).toEqual({ names: ["first"], notices: [] });
    expect(await appName({ application_name: "C:\\temp\\app" })).toEqual({
      names: ["C:\\temp\\app"],
      notices: [],
    });
    expect(await appName({ application_name: "it\\'s" })).toEqual({ names: ["it\\'s"], notices: [] });
    const long = "a".repeat(70);
    const cut = await appName({ application_name: long });
    expect(cut.names).toEqual(["a".repeat(63)]);
    expect(cut.notices.length).toBeLessThanOrEqual(1);
    await role.drop();
  });

  it("startup parameters PgBouncer does not take are refused as Neon's pooler refuses them (08P01); tracked ones, in options too, hold; direct connections take them all", async () => {
    const refusals: [pg.ClientConfig, string][] = [
      [{ statement_timeout: 1000 }, "unsupported startup parameter: statement_timeout"],
      [{ lock_timeout: 1000 }, "unsupported startup parameter: lock_timeout"],
      [{ options: "-c search_path=app" }, "unsupported startup parameter in options: search_path"],
      [
        { options: "search_path=app" },
        "unsupported options startup parameter: only '-c config=val' and '--config=val' are allowed",
      ],
      [
        { options: "-c DateStyle" },
        "unsupported options startup parameter: parameter must be of the form key=value",
      ],
    ];
    // The pooled URI's parts as fields (a connection string's own options would win over the config's).
    const uri = new URL(p.pooledUri as string);
    const pooledWith = (config: pg.ClientConfig) =>
      new pg.Client({
        host: uri.hostname,
        port: Number(uri.port),
        user: decodeURIComponent(uri.username),
        password: decodeURIComponent(uri.password),
        database: uri.pathname.slice(1),
        ...config,
        options: `${uri.searchParams.get("options")}${config.options ? ` ${config.options}` : ""}`,
      });
    for (const [config, message] of refusals) {
      const c = pooledWith(config);
      c.on("error", () => {});
      await expect(c.connect(), message).rejects.toMatchObject({ code: "08P01", message });
    }
    // Tracked settings are taken as parameters and in options.
    const taken = pooledWith({
      options: "-c TimeZone=Asia/Tokyo --DateStyle=SQL,DMY",
      application_name: "tracked",
    });
    await taken.connect();
    try {
      expect(
        (
          await taken.query(
            "SELECT current_setting('TimeZone') AS tz, current_setting('DateStyle') AS ds, current_setting('application_name') AS app",
          )
        ).rows,
      ).toEqual([{ tz: "Asia/Tokyo", ds: "SQL, DMY", app: "tracked" }]);
    } finally {
      await taken.end();
    }
    // Values with spaces written as Postgres and PgBouncer read options (a backslash takes the next
    // character as it is), pooled and direct alike.
    const escaped =
      "-c application_name=my\\ app\\\\x -c t\\imezone=\\P\\o\\r\\t\\ugal --DateStyle=German,\\ YMD";
    const settings =
      "SELECT current_setting('application_name') AS app, current_setting('TimeZone') AS tz, current_setting('DateStyle') AS ds";
    const direct = new pg.Client({
      connectionString: p.uri.replace(/\?.*$/, ""),
      options: `${new URL(p.uri).searchParams.get("options")} ${escaped}`,
      statement_timeout: 1234,
    });
    const pooled = pooledWith({ options: escaped });
    try {
      for (const client of [direct, pooled]) {
        client.on("error", () => {});
        await client.connect();
        expect((await client.query(settings)).rows).toEqual([
          { app: "my app\\x", tz: "Portugal", ds: "German, YMD" },
        ]);
      }
      expect((await direct.query("SHOW statement_timeout")).rows).toEqual([{ statement_timeout: "1234ms" }]);
    } finally {
      await Promise.all([direct, pooled].map((client) => client.end().catch(() => {})));
    }
  });

  it("direct connections beyond max_connections get Postgres' 53300", async () => {
    const direct: pg.Client[] = [];
    let refused: unknown;
    try {
      for (let i = 0; i < 130 && !refused; i++) {
        const c = new pg.Client({ connectionString: p.uri });
        direct.push(c);
        await c.connect().catch((e: unknown) => {
          refused = e;
        });
      }
      expect(refused).toMatchObject({ code: "53300" });
    } finally {
      await Promise.all(direct.map((c) => c.end().catch(() => {})));
    }
  }, 60_000);

  it("a transaction keeps its session; a client that vanishes mid-transaction leaves its session rolled back and reusable", async () => {
    const a = pooledClient();
    await a.connect();
    await a.query("BEGIN");
    const pid = (await a.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
    await a.query("INSERT INTO items VALUES (30, 'vanishing')");
    await a.query("SELECT pg_advisory_xact_lock(42)");
    expect((await a.query("SELECT pg_backend_pid() AS pid")).rows[0].pid).toBe(pid);
    a.on("error", () => {});
    (a as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
    const b = pooledClient();
    await b.connect();
    let free = false;
    for (let i = 0; i < 100 && !free; i++) {
      free = (await b.query("SELECT pg_try_advisory_xact_lock(42) AS got")).rows[0].got;
      if (!free) await new Promise((r) => setTimeout(r, 50));
    }
    expect(free).toBe(true);
    expect((await b.query("SELECT count(*)::int AS n FROM items WHERE id = 30")).rows).toEqual([{ n: 0 }]);
    expect(
      (
        await b.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'",
        )
      ).rows,
    ).toEqual([{ n: 0 }]);
    await b.end();
  });

  it("a pooled client that ends right after sending statements has them run to their end, as on Postgres: an autocommit INSERT and a COMMIT are kept, a batch without its Sync is not", async () => {
    const direct = new pg.Client({ connectionString: p.uri });
    await direct.connect();
    await direct.query("CREATE TABLE sent_then_gone (n int)");
    const count = async (where: string) =>
      (await direct.query(`SELECT count(*)::int AS n FROM sent_then_gone WHERE ${where}`)).rows[0].n;
    // Not awaited: node-postgres sends the INSERT, then Terminate at end().
    const a = pooledClient();
    await a.connect();
    const sent = a
      .query("INSERT INTO sent_then_gone SELECT 1 FROM generate_series(1, 100000)")
      .catch(() => {});
    await a.end();
    await sent;
    await eventually(async () => (await count("n = 1")) === 100_000);
    const b = pooledClient();
    await b.connect();
    await b.query("BEGIN");
    await b.query("INSERT INTO sent_then_gone VALUES (2)");
    const committing = b.query("COMMIT").catch(() => {});
    await b.end();
    await committing;
    await eventually(async () => (await count("n = 2")) === 1);
    // Parse, Bind and Execute with no Sync, then Terminate: Postgres rolls the batch back at the
    // client's end; its session is closed, not lent to the next client (whose Query would commit it).
    const c = pooledClient();
    await c.connect();
    const connection = (c as unknown as { connection: PgConnection }).connection;
    connection.parse({ text: "INSERT INTO sent_then_gone VALUES (3)" }, true);
    connection.bind({}, true);
    connection.execute({}, true);
    connection.stream.write(Buffer.from([0x58, 0, 0, 0, 4]));
    c.on("error", () => {});
    await new Promise((r) => connection.stream.once("close", r));
    const next = pooledClient();
    await next.connect();
    for (let i = 0; i < 10; i++) await next.query("SELECT 1");
    await next.end();
    expect(await count("n = 3")).toBe(0);
    await direct.query("DROP TABLE sent_then_gone");
    await direct.end();
  });

  it("a client's Terminate ends the client alone: the server session it held goes back to the pool alive", async () => {
    // A pool of its own, with one session.
    const role = await roleOfItsOwn("terminator");
    const uri = role.uri;
    const pidOf = async (c: pg.Client) => (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
    const first = new pg.Client({ connectionString: uri.toString() });
    await first.connect();
    const pid = await pidOf(first);
    await first.end();
    // A statement and Terminate in one write (as a pipelining client sends them).
    const second = new pg.Client({ connectionString: uri.toString() });
    second.on("error", () => {});
    await second.connect();
    const stream = (second as unknown as { connection: PgConnection }).connection.stream;
    const sql = Buffer.from("SELECT pg_sleep(0.2)\0");
    const query = Buffer.alloc(5);
    query.write("Q");
    query.writeInt32BE(4 + sql.length, 1);
    stream.write(Buffer.concat([query, sql, Buffer.from([0x58, 0, 0, 0, 4])]));
    await new Promise((r) => stream.once("close", r));
    await new Promise((r) => setTimeout(r, 500));
    const third = new pg.Client({ connectionString: uri.toString() });
    await third.connect();
    expect(await pidOf(third)).toBe(pid);
    await third.end();
    await role.drop();
  });

  it("a role dropped and made again gets server sessions of its own; a reset password drops the clients logged in with the old one, as Neon says", async () => {
    const { allSettled } = computeClient(() => server, key);
    const branches = await api("GET", `/projects/${p.id}/branches`);
    const base = `/projects/${p.id}/branches/${branches.body.branches[0].id}`;
    const pooledAs = (role: string, password: string) =>
      pooledClient({ connectionString: pooledUriAs(role, password).toString() });
    const who = async (c: pg.Client) => (await c.query("SELECT current_user AS u")).rows;
    const made = await unlocked("POST", `${base}/roles`, { role: { name: "cycled" } });
    await allSettled(p.id, made.body.operations);
    const old = pooledAs("cycled", made.body.role.password);
    const oldEnded = new Promise<string | undefined>((resolve) =>
      old.on("error", (err: Error & { code?: string }) => resolve(err.code)),
    );
    await old.connect();
    expect(await who(old)).toEqual([{ u: "cycled" }]); // its session is idle in the pool now
    const dropped = await api("DELETE", `${base}/roles/cycled`);
    await allSettled(p.id, dropped.body.operations);
    // The deleted role's sessions end, its pooled clients with them.
    expect(await oldEnded).toBe("57P01");
    const again = await api("POST", `${base}/roles`, { role: { name: "cycled" } });
    await allSettled(p.id, again.body.operations);
    const fresh = pooledAs("cycled", again.body.role.password);
    await fresh.connect();
    expect(await who(fresh)).toEqual([{ u: "cycled" }]);

    // A password reset drops the role's connections, as Neon's API says: the pooled client logged
    // in with the old one is ended; the new password logs in.
    const ended = new Promise<string | undefined>((resolve) =>
      fresh.on("error", (err: Error & { code?: string }) => resolve(err.code)),
    );
    const reset = await api("POST", `${base}/roles/cycled/reset_password`);
    await allSettled(p.id, reset.body.operations);
    expect(await ended).toBe("57P01");
    const after = pooledAs("cycled", reset.body.role.password);
    await after.connect();
    expect(await who(after)).toEqual([{ u: "cycled" }]);
    await Promise.all([old, fresh, after].map((c) => c.end().catch(() => {})));
  });

  it("a database renamed through the API once its clients left: the sessions the pooler and SQL over HTTP kept idle on it log out first", async () => {
    const { allSettled } = computeClient(() => server, key);
    const branches = await api("GET", `/projects/${p.id}/branches`);
    const base = `/projects/${p.id}/branches/${branches.body.branches[0].id}`;
    const made = await unlocked("POST", `${base}/databases`, {
      database: { name: "renamable", owner_name: p.role },
    });
    expect(made.status).toBe(201);
    await allSettled(p.id, made.body.operations);
    const on = (uri: string, database: string) => {
      const url = new URL(uri);
      url.pathname = `/${database}`;
      return url.toString();
    };
    const pooled = pooledClient({ connectionString: on(p.pooledUri as string, "renamable") });
    await pooled.connect();
    await pooled.query("SELECT 1");
    await pooled.end();
    expect(await neon(on(p.uri, "renamable"))`SELECT current_database() AS db`).toEqual([
      { db: "renamable" },
    ]);

    const renamed = await api("PATCH", `${base}/databases/renamable`, { database: { name: "renamed" } });
    expect(renamed.status).toBe(200);
    await allSettled(p.id, renamed.body.operations);
    const direct = new pg.Client({ connectionString: on(p.uri, "renamed") });
    await direct.connect();
    expect((await direct.query("SELECT current_database() AS db")).rows).toEqual([{ db: "renamed" }]);
    await direct.end();
  });

  it("a CancelRequest with the pooler's key cancels the query of the session the client holds", async () => {
    const c = pooledClient();
    await c.connect();
    // Its failure is taken as it comes: the cancel may land before the socket below has closed.
    const slow = c.query("SELECT pg_sleep(30)").then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((r) => setTimeout(r, 300));
    await sendCancelRequest(server.pgPort as number, c);
    expect(await slow).toMatchObject({ code: "57014" });
    expect((await c.query("SELECT 1 AS ok")).rows).toEqual([{ ok: 1 }]);
    await c.end();
  });

  it("a CancelRequest that reaches the server after its client's query ended cancels no other client's query", async () => {
    // The session goes to the next waiting client only once the server has taken the cancel, as
    // with PgBouncer (measured before: 9 of 400 such cancels ended another client's query).
    const canceller = pooledClient();
    await canceller.connect();
    const others = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const c = pooledClient();
        await c.connect();
        return c;
      }),
    );
    let stop = false;
    const failures: unknown[] = [];
    let answered = 0;
    const loops = others.map(async (c) => {
      while (!stop) {
        await c.query("SELECT pg_sleep(0.02)").then(
          () => answered++,
          (err: unknown) => failures.push(err),
        );
      }
    });
    for (let i = 0; i < 300; i++) {
      const short = canceller.query("SELECT 1").catch((err: unknown) => err);
      void sendCancelRequest(server.pgPort as number, canceller);
      await short;
      await new Promise((r) => setTimeout(r, 2));
    }
    stop = true;
    await Promise.all(loops);
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(100);
    await Promise.all([canceller, ...others].map((c) => c.end()));
  });

  it("clients that vanish, garbage and bad requests leave no session stuck and no descriptor behind", async () => {
    const fds = () => fs.readdirSync(`/proc/${server.proc.pid}/fd`).length;
    const settle = () => new Promise((r) => setTimeout(r, 500));
    // The first round grows the pool to what the rounds need (its sessions stay, as PgBouncer's
    // do, until server_idle_timeout); the later rounds must leave the count where it was.
    let before = 0;
    for (let round = 0; round < 3; round++) {
      if (round === 1) {
        await settle();
        before = process.platform === "linux" ? fds() : 0;
      }
      const vanishing = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const c = pooledClient();
          c.on("error", () => {});
          await c.connect();
          await c.query("BEGIN");
          await c.query("SELECT pg_advisory_xact_lock($1)", [100 + i]);
          return c;
        }),
      );
      for (const c of vanishing)
        (c as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const socket = new ws(`${server.url.replace("http", "ws")}/v2`);
          await new Promise((r) => socket.on("open", r));
          socket.send(Buffer.from("garbage, not a startup packet"));
          await new Promise((r) => socket.on("close", r));
        }),
      );
      await Promise.all(Array.from({ length: 20 }, () => post("{")));
      const busy = pooledClient();
      busy.on("error", () => {});
      await busy.connect();
      const slow = busy.query("SELECT pg_sleep(1)").catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
      (busy as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
      await slow;
    }
    const check = new pg.Client({ connectionString: p.uri });
    await check.connect();
    let stuck = -1;
    for (let i = 0; i < 100 && stuck !== 0; i++) {
      stuck = (
        await check.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (state LIKE 'idle in transaction%' OR wait_event = 'PgSleep')",
        )
      ).rows[0].n;
      if (stuck) await new Promise((r) => setTimeout(r, 50));
    }
    await check.end();
    expect(stuck).toBe(0);
    await settle();
    if (process.platform === "linux") expect(fds()).toBeLessThanOrEqual(before + 3);
  }, 60_000);

  it("one server session ended alone (pg_terminate_backend) ends only the client holding it, as with PgBouncer", async () => {
    const clients = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const c = pooledClient();
        c.on("error", () => {});
        await c.connect();
        await c.query("SELECT 1");
        return c;
      }),
    );
    const ended: unknown[] = [];
    for (const c of clients) c.on("end", () => ended.push(c));
    const direct = new pg.Client({ connectionString: p.uri });
    await direct.connect();
    const terminated = await direct.query(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'pgbouncer' AND state = 'idle' LIMIT 1",
    );
    expect(terminated.rows).toEqual([{ ok: true }]);
    await direct.end();
    await new Promise((r) => setTimeout(r, 300));
    // Each was between transactions (no session held): none is ended (all five had been), and each goes on.
    expect(ended).toHaveLength(0);
    for (const c of clients) expect((await c.query("SELECT 2 AS n")).rows).toEqual([{ n: 2 }]);
    for (const c of clients) await c.end();
  });

  it("suspending the compute ends its pooled clients with 57P01, and the next pooled client wakes it", async () => {
    const c = pooledClient();
    await c.connect();
    await c.query("SELECT 1");
    const ended = new Promise<unknown>((resolve) => c.on("error", resolve));
    expect((await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/suspend`)).status).toBe(200);
    expect(await ended).toMatchObject({ code: "57P01" });
    const next = pooledClient();
    await next.connect();
    expect((await next.query("SELECT count(*)::int AS n FROM items")).rows).toEqual([{ n: 4 }]);
    await next.end();
  });
});

describe("a project's network settings (IP allow list, block_public_connections)", () => {
  const IP_REFUSED =
    "This IP address 127.0.0.1 is not allowed to connect to this endpoint. Please add it to the allowed list in the Neon console. Make sure to check for IPv4 or IPv6 addresses.";
  const BLOCKED = "This connection is trying to access this endpoint from a blocked network.";
  let q: {
    id: string;
    branchId: string;
    uri: string;
    pooledUri: string;
    wrongUri: string;
    wrongPooledUri: string;
  };

  /** "ok", or the message a client got, for each way in: TCP direct and pooled, WebSocket, HTTP. */
  async function attempts(uri = q.uri, pooledUri = q.pooledUri): Promise<Record<string, string>> {
    const outcome = (work: Promise<unknown>) =>
      work.then(
        () => "ok",
        (err: { message: string }) => err.message,
      );
    const tcp = async (connectionString: string) => {
      const c = new pg.Client({ connectionString });
      try {
        await c.connect();
        await c.query("SELECT 1");
      } finally {
        await c.end().catch(() => {});
      }
    };
    const websocket = async () => {
      const pool = new NeonPool({ connectionString: uri });
      try {
        await pool.query("SELECT 1");
      } finally {
        await pool.end();
      }
    };
    return {
      tcp: await outcome(tcp(uri)),
      pooled: await outcome(tcp(pooledUri)),
      websocket: await outcome(websocket()),
      http: await outcome(neon(uri)`SELECT 1`),
    };
  }
  const all = (text: string) => ({ tcp: text, pooled: text, websocket: text, http: text });
  const settings = async (value: Record<string, unknown>) => {
    const res = await api("PATCH", `/projects/${q.id}`, { project: { settings: value } });
    expect(res.status).toBe(200);
    return res.body.project.settings;
  };

  beforeAll(async () => {
    const res = await api("POST", "/projects", { project: { name: "network" } });
    expect(res.status).toBe(201);
    const uri: string = res.body.connection_uris[0].connection_uri;
    const role: string = res.body.roles[0].name;
    const pooled = await api(
      "GET",
      `/projects/${res.body.project.id}/connection_uri?role_name=${role}&database_name=neondb&pooled=true`,
    );
    const wrong = (u: string) => u.replace(`:${res.body.roles[0].password}@`, ":nope@");
    q = {
      id: res.body.project.id,
      branchId: res.body.branch.id,
      uri,
      pooledUri: pooled.body.uri,
      wrongUri: wrong(uri),
      wrongPooledUri: wrong(pooled.body.uri),
    };
  });

  it("an address the list does not hold is refused on every way in, before its password is checked, with the proxy's text", async () => {
    expect(await attempts()).toEqual(all("ok"));
    // IPv6 entries never admit an IPv4 client, not even ::/0 or the client's IPv4-mapped form.
    const ips = ["10.0.0.1", "::1", "::/0", "::ffff:127.0.0.1", "192.168.0.0/16"];
    expect(await settings({ allowed_ips: { ips } })).toMatchObject({ allowed_ips: { ips } });
    expect(await attempts()).toEqual(all(IP_REFUSED));
    // The address is checked before the password: a wrong one gets the same answer.
    expect(await attempts(q.wrongUri, q.wrongPooledUri)).toEqual(all(IP_REFUSED));
    // The password form (no endpoint until the password is read) is refused too.
    const plain = new URL(q.uri);
    const c = new pg.Client({
      host: plain.hostname,
      port: Number(plain.port),
      user: plain.username,
      database: "neondb",
      password: `endpoint=${new URLSearchParams(plain.search).get("options")?.slice("endpoint=".length)};${decodeURIComponent(plain.password)}`,
    });
    await expect(c.connect()).rejects.toThrow(IP_REFUSED);
    await c.end().catch(() => {});
  });

  it("a single address, a range or a subnet holding the client lets it in; an empty list lets everyone in", async () => {
    for (const ips of [["10.0.0.1", "127.0.0.1"], ["127.0.0.1-127.0.0.9"], ["127.0.0.0/8"]]) {
      await settings({ allowed_ips: { ips } });
      expect(await attempts(), ips.join(",")).toEqual(all("ok"));
    }
    await settings({ allowed_ips: { ips: ["127.0.0.2-127.0.0.9"] } });
    expect((await attempts()).http).toBe(IP_REFUSED);
    await settings({ allowed_ips: { ips: [] } });
    expect(await attempts()).toEqual(all("ok"));
  });

  it("protected_branches_only applies the list to protected branches alone", async () => {
    await settings({ allowed_ips: { ips: ["10.0.0.1"], protected_branches_only: true } });
    expect(await attempts()).toEqual(all("ok"));
    const protect = (value: boolean) =>
      api("PATCH", `/projects/${q.id}/branches/${q.branchId}`, { branch: { protected: value } });
    expect((await protect(true)).status).toBe(200);
    expect(await attempts()).toEqual(all(IP_REFUSED));
    expect((await protect(false)).status).toBe(200);
    expect(await attempts()).toEqual(all("ok"));
    await settings({ allowed_ips: { ips: [], protected_branches_only: false } });
  });

  it("a CancelRequest from an address the list does not hold is dropped; one from an allowed address cancels", async () => {
    const c = new pg.Client({ connectionString: q.uri });
    await c.connect();
    const sleepThenCancel = async (seconds: number) => {
      const running = c.query(`SELECT pg_sleep(${seconds}), 1 AS done`);
      // The caller awaits it; a cancel may end it before sendCancelRequest returns.
      running.catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
      await sendCancelRequest(server.pgPort as number, c);
      return running;
    };
    try {
      await settings({ allowed_ips: { ips: ["10.0.0.1"] } });
      expect((await sleepThenCancel(1.5)).rows[0].done).toBe(1);
      await settings({ allowed_ips: { ips: [] } });
      await expect(sleepThenCancel(10)).rejects.toMatchObject({ code: "57014" });
    } finally {
      await c.end();
    }
  });

  it("block_public_connections refuses every client (the emulator has no private network) until it is unset", async () => {
    await settings({ block_public_connections: true });
    expect(await attempts()).toEqual(all(BLOCKED));
    await settings({ block_public_connections: false });
    expect(await attempts()).toEqual(all("ok"));
  });

  it("entries that are not an address, a range or a subnet, and non-boolean flags, are a 400 and change nothing", async () => {
    const before = (await api("GET", `/projects/${q.id}`)).body.project.settings;
    for (const [value, field] of [
      [{ allowed_ips: { ips: ["10.0.0.1", "not-an-ip"] } }, "allowed_ips.ips.1"],
      [{ allowed_ips: { ips: ["10.0.0.0/33"] } }, "allowed_ips.ips.0"],
      [{ allowed_ips: { ips: ["10.0.0.9-10.0.0.1"] } }, "allowed_ips.ips.0"],
      [{ allowed_ips: { ips: ["10.0.0.1-::1"] } }, "allowed_ips.ips.0"],
      [{ allowed_ips: { ips: ["fe80::1%eth0"] } }, "allowed_ips.ips.0"],
      [{ allowed_ips: { ips: "10.0.0.1" } }, "allowed_ips.ips"],
      [{ allowed_ips: { protected_branches_only: "yes" } }, "allowed_ips.protected_branches_only"],
      [{ block_public_connections: "yes" }, "block_public_connections"],
    ] as const) {
      const res = await api("PATCH", `/projects/${q.id}`, { project: { settings: value } });
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.body.message, JSON.stringify(value)).toContain(field);
    }
    const created = await api("POST", "/projects", {
      project: { name: "bad-ips", settings: { allowed_ips: { ips: ["300.1.1.1"] } } },
    });
    expect(created.status).toBe(400);
    expect(created.body.message).toContain('"300.1.1.1" is not an IP address');
    expect((await api("GET", `/projects/${q.id}`)).body.project.settings).toEqual(before);
    expect(await attempts()).toEqual(all("ok"));
  });
});

describe("shutdown", () => {
  it("a SIGTERM ends the emulator while WebSocket, TCP and pooled clients stay connected", async () => {
    const tunnel = new NeonClient({ connectionString: p.uri });
    const tunnelEnded = new Promise<string>((resolve) =>
      tunnel.on("error", (e: Error) => resolve(e.message)),
    );
    await tunnel.connect();
    expect((await tunnel.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    // Each hears what a compute's stop says (57P01), not a bare end of its connection.
    const endOf = (client: pg.Client) =>
      new Promise<unknown>((resolve) =>
        client.on("error", (e: Error & { code?: string }) => resolve(e.code)),
      );
    const direct = new pg.Client({ connectionString: p.uri });
    const directEnded = endOf(direct);
    await direct.connect();
    const pooled = new pg.Client({ connectionString: p.pooledUri });
    const pooledEnded = endOf(pooled);
    await pooled.connect();
    // One holding a server session in a transaction, one not holding any.
    const pooledInTx = new pg.Client({ connectionString: p.pooledUri });
    const pooledInTxEnded = endOf(pooledInTx);
    await pooledInTx.connect();
    await pooledInTx.query("BEGIN");
    // A tunnel whose peer never answers the close (it reads nothing more) is cut off after a second.
    const silent = net.connect(Number(new URL(server.url).port), "127.0.0.1");
    silent.on("error", () => {});
    silent.write(
      "GET /v2 HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    expect((await new Promise<Buffer>((resolve) => silent.once("data", resolve))).toString()).toMatch(
      /^HTTP\/1\.1 101/,
    );
    silent.pause();
    // The tunnel, an upgraded connection of the HTTP server, had held its close (and the exit) open;
    // a silent peer, for ws's 30 s close timeout.
    const exited = server.stop();
    const code = await Promise.race([
      exited,
      new Promise((r) => setTimeout(() => r("still running"), 10_000)),
    ]);
    silent.destroy();
    expect(code).toBe(0);
    expect(await tunnelEnded).toBe("terminating connection due to administrator command");
    expect(await Promise.all([directEnded, pooledEnded, pooledInTxEnded])).toEqual([
      "57P01",
      "57P01",
      "57P01",
    ]);
  }, 30_000);
});
