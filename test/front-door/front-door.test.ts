import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import tls from "node:tls";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendCancelRequest } from "../helpers/compute.js";
import { http, type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";

/**
 * The Postgres front door against a real server, on the manual clock: routing forms, Neon's
 * errors, wake on connect without an advance, activity and auto-suspend, bad input. One server
 * (and its computes) for the file.
 */
let server: RunningServer;
let dir: string;
const key = randomKey();
const env = () => ({
  NEON_EMULATOR_DB: path.join(dir, "db.sqlite"),
  NEON_EMULATOR_API_KEY: key,
  NEON_EMULATOR_COMPUTE: "postgres",
  NEON_EMULATOR_PG_PORT: "0",
  NEON_EMULATOR_PG_AUTH_TIMEOUT: "2",
  NEON_EMULATOR_CLOCK: "manual",
  NEON_EMULATOR_CLOCK_START: "2026-01-01T00:00:00Z",
});

beforeAll(async () => {
  dir = tempDir();
  // The servers run as an unprivileged user when the tests run as root: it must reach the data folder.
  fs.chmodSync(dir, 0o755);
  server = await startServer(env());
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const api = (method: string, p: string, body?: unknown) => http(server.url, key, method, `/api/v2${p}`, body);
const advance = (seconds: number) => http(server.url, key, "POST", "/_emulator/clock/advance", { seconds });
const run = promisify(execFile);

interface Project {
  id: string;
  endpointId: string;
  host: string;
  role: string;
  password: string;
  uri: string;
}

/** Every role password the file saw: none may appear in the server's output. */
const passwords: string[] = [];

async function createProject(name: string): Promise<Project> {
  const res = await api("POST", "/projects", { project: { name } });
  expect(res.status).toBe(201);
  passwords.push(res.body.roles[0].password);
  return {
    id: res.body.project.id,
    endpointId: res.body.endpoints[0].id,
    host: res.body.endpoints[0].host,
    role: res.body.roles[0].name,
    password: res.body.roles[0].password,
    uri: res.body.connection_uris[0].connection_uri,
  };
}

function client(config: pg.ClientConfig): pg.Client {
  return new pg.Client({ host: "127.0.0.1", port: server.pgPort, database: "neondb", ...config });
}

async function one(
  config: pg.ClientConfig,
  sql = "SELECT current_user AS u",
): Promise<Record<string, unknown>> {
  const c = client(config);
  await c.connect();
  try {
    return (await c.query(sql)).rows[0];
  } finally {
    await c.end();
  }
}

/** The error a connection attempt fails with (code and message). */
async function refusal(
  config: pg.ClientConfig,
): Promise<{ code?: string; message: string; severity?: string }> {
  const c = client(config);
  try {
    await c.connect();
  } catch (err) {
    return err as { code?: string; message: string; severity?: string };
  }
  await c.end();
  throw new Error("the connection was accepted");
}

async function operations(
  projectId: string,
): Promise<{ action: string; status: string; endpoint_id?: string }[]> {
  return (await api("GET", `/projects/${projectId}/operations`)).body.operations;
}

async function endpoint(p: Project) {
  return (await api("GET", `/projects/${p.id}/endpoints/${p.endpointId}`)).body.endpoint;
}

let p: Project;

/**
 * Waits, in real time, for the shared project's endpoint to reach `state`: a suspend's effect (the
 * server's shutdown checkpoint) completes after the advance that started it, in seconds on a busy disk.
 */
async function stateBecomes(state: string): Promise<void> {
  for (let i = 0; i < 400 && (await endpoint(p)).current_state !== state; i++)
    await new Promise((r) => setTimeout(r, 50));
  expect((await endpoint(p)).current_state).toBe(state);
}

describe("connection strings work as handed out", () => {
  it("the API's connection URI connects with node-postgres and psql, waking the endpoint without a clock advance", async () => {
    p = await createProject("door");
    expect(p.uri).toBe(
      `postgresql://${p.role}:${p.password}@127.0.0.1:${server.pgPort}/neondb?options=endpoint%3D${p.endpointId}`,
    );
    const c = new pg.Client({ connectionString: p.uri });
    await c.connect();
    expect((await c.query("SELECT current_user AS u, current_database() AS d")).rows).toEqual([
      { u: p.role, d: "neondb" },
    ]);
    await c.query("CREATE TABLE notes (id int PRIMARY KEY, body text)");
    await c.query("INSERT INTO notes VALUES (1, 'hello')");
    await c.end();
    const { stdout } = await run("psql", [p.uri, "-tAc", "SELECT body FROM notes"]);
    expect(stdout.trim()).toBe("hello");
    // The wake was the endpoint's own start_compute, completed at the manual clock's time.
    const start = (await operations(p.id)).filter((o) => o.action === "start_compute");
    expect(start.map((o) => o.status)).toEqual(["finished"]);
    expect((await endpoint(p)).current_state).toBe("active");
    const uri = await api(
      "GET",
      `/projects/${p.id}/connection_uri?database_name=neondb&role_name=${p.role}&pooled=true`,
    );
    expect(uri.body.uri).toContain(`options=endpoint%3D${p.endpointId}-pooler`);
    expect((await one({ connectionString: uri.body.uri, host: undefined, port: undefined })).u).toBe(p.role);
  });

  it("parallel logins all get in, their role reads taking turns on one session (no pg warning of queued queries)", async () => {
    const logins = await Promise.all(
      Array.from({ length: 10 }, async () => (await one({ connectionString: p.uri })).u),
    );
    expect(logins).toEqual(Array(10).fill(p.role));
    expect(server.stderr()).not.toContain("DeprecationWarning");
  });

  it("routes by the password form endpoint=<id>;<password> (and $) when nothing else names the endpoint", async () => {
    expect((await one({ user: p.role, password: `endpoint=${p.endpointId};${p.password}` })).u).toBe(p.role);
    expect((await one({ user: p.role, password: `endpoint=${p.endpointId}$${p.password}` })).u).toBe(p.role);
  });

  it("routes by TLS server name, verifiable with the CA from /_emulator/ca.pem, with SCRAM channel binding", async () => {
    const res = await fetch(`${server.url}/_emulator/ca.pem`);
    expect(res.status).toBe(200);
    const ca = await res.text();
    expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(fs.readFileSync(path.join(dir, "db-ca.pem"), "utf8")).toBe(ca);
    const row = await one(
      { user: p.role, password: p.password, ssl: { ca, servername: p.host } },
      "SELECT current_user AS u",
    );
    expect(row.u).toBe(p.role);
    // An untrusted authority fails verification, as node-postgres' verify-full should.
    await expect(one({ user: p.role, password: p.password, ssl: { servername: p.host } })).rejects.toThrow(
      /self-signed|self signed|unable to get local issuer|unable to verify the first certificate/,
    );
    const caFile = path.join(dir, "ca-copy.pem");
    fs.writeFileSync(caFile, ca);
    const { stdout } = await run("psql", [
      `host=${p.host} hostaddr=127.0.0.1 port=${server.pgPort} user=${p.role} password=${p.password} dbname=neondb sslmode=verify-full sslrootcert=${caFile} channel_binding=require`,
      "-tAc",
      "SELECT 'bound'",
    ]);
    expect(stdout.trim()).toBe("bound");
  });
});

describe("direct SSL", () => {
  it("takes a TLS handshake first (libpq 17's sslnegotiation=direct) with the ALPN protocol postgresql, and refuses one without it in Postgres' words", async () => {
    const ca = await (await fetch(`${server.url}/_emulator/ca.pem`)).text();
    const direct = (alpn?: string[]) =>
      new Promise<tls.TLSSocket>((resolve, reject) => {
        const s = tls.connect({
          host: "127.0.0.1",
          port: server.pgPort as number,
          servername: p.host,
          ca,
          ...(alpn ? { ALPNProtocols: alpn } : {}),
        });
        s.once("secureConnect", () => resolve(s));
        s.once("error", reject);
      });
    const socket = await direct(["postgresql"]);
    expect(socket.alpnProtocol).toBe("postgresql");
    // Routed by the server name, as after an SSLRequest.
    const c = new pg.Client({ stream: () => socket, user: p.role, password: p.password, database: "neondb" });
    await c.connect();
    try {
      expect((await c.query("SELECT 'direct' AS v")).rows).toEqual([{ v: "direct" }]);
    } finally {
      await c.end();
    }
    const bare = await direct();
    const said = await new Promise<string>((resolve) => {
      let got = "";
      bare.on("data", (d: Buffer) => {
        got += d.toString();
      });
      bare.on("error", () => {});
      bare.on("close", () => resolve(got));
    });
    expect(said).toContain(
      "direct SSL connection was established without ALPN protocol negotiation extension",
    );
  });
});

describe("Neon's errors", () => {
  it("unknown endpoint, wrong password, missing endpoint id, inconsistent names, bad id characters", async () => {
    const unknown = await refusal({
      user: p.role,
      password: p.password,
      options: "endpoint=ep-nothing-here-123",
    });
    expect(unknown).toMatchObject({ code: "XX000", severity: "ERROR" });
    expect(unknown.message).toBe(
      "The requested endpoint could not be found, or you don't have access to it. Please check the provided ID and try again.",
    );
    const wrong = await refusal({ user: p.role, password: "nope", options: `endpoint=${p.endpointId}` });
    expect(wrong).toMatchObject({
      code: "28P01",
      message: `password authentication failed for user '${p.role}'`,
    });
    const noRole = await refusal({ user: "ghost", password: "x", options: `endpoint=${p.endpointId}` });
    expect(noRole).toMatchObject({
      code: "28P01",
      message: "password authentication failed for user 'ghost'",
    });
    // What `neon connection-string main@<time>` builds (the branch id as the host's first label).
    for (const point of ["neon_timestamp:2026-11-29T16:17:19Z", "neon_lsn:0/1992418"]) {
      const timeTravel = await refusal({
        user: p.role,
        password: p.password,
        options: `endpoint=${p.endpointId} ${point}`,
      });
      expect(timeTravel).toMatchObject({ code: "XX000", severity: "ERROR" });
      expect(timeTravel.message).toMatch(
        /^Time Travel connections .* are not available on neon-emulator: create a branch at that point/,
      );
    }
    const missing = await refusal({ user: p.role, password: p.password });
    expect(missing.message).toMatch(/^Endpoint ID is not specified\. .*https:\/\/neon\.tech\/sni$/);
    const ca = await (await fetch(`${server.url}/_emulator/ca.pem`)).text();
    const inconsistent = await refusal({
      user: p.role,
      password: p.password,
      options: "endpoint=ep-other-123",
      ssl: { ca, servername: p.host },
    });
    expect(inconsistent.message).toBe(
      `Inconsistent project name inferred from SNI ('${p.endpointId}') and project option ('ep-other-123').`,
    );
    const bad = await refusal({ user: p.role, password: p.password, options: "endpoint=ep_bad!" });
    expect(bad.message).toBe(
      "Project name ('ep_bad!') must contain only alphanumeric characters and hyphen.",
    );
    const noDb = await refusal({
      user: p.role,
      password: p.password,
      options: `endpoint=${p.endpointId}`,
      database: "nope",
    });
    expect(noDb).toMatchObject({ code: "3D000" });
  });

  it("a disabled endpoint refuses with Neon's text and is not woken", async () => {
    const q = await createProject("disabled");
    const patched = await api("PATCH", `/projects/${q.id}/endpoints/${q.endpointId}`, {
      endpoint: { disabled: true },
    });
    expect(patched.status).toBe(200);
    await advance(60);
    const refused = await refusal({
      user: q.role,
      password: q.password,
      options: `endpoint=${q.endpointId}`,
    });
    expect(refused).toMatchObject({
      code: "XX000",
      message: "The endpoint has been disabled. Enable it using the API and retry.",
    });
    expect(
      (await api("GET", `/projects/${q.id}/endpoints/${q.endpointId}`)).body.endpoint.current_state,
    ).not.toBe("active");
  });
});

describe("project quotas", () => {
  it("a used-up quota suspends the compute under its clients and refuses the next with the proxy's text, over TCP and HTTP", async () => {
    const q = await createProject("quota");
    const login = { user: q.role, password: q.password, options: `endpoint=${q.endpointId}` };
    const c = client(login);
    await c.connect();
    const ended = new Promise<{ code?: string }>((resolve) =>
      c.on("error", (err) => resolve(err as { code?: string })),
    );
    await advance(30);
    const setQuota = (active_time_seconds: number) =>
      api("PATCH", `/projects/${q.id}`, { project: { settings: { quota: { active_time_seconds } } } });
    const patched = await setQuota(10);
    expect(patched.status).toBe(200);
    expect(patched.body.operations.map((o: { action: string }) => o.action)).toEqual(["suspend_compute"]);
    await advance(5);
    expect((await ended).code).toBe("57P01");
    await c.end().catch(() => {});
    for (let i = 0; i < 400 && (await endpoint(q)).current_state !== "idle"; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect((await endpoint(q)).current_state).toBe("idle");
    const unavailable =
      "Control plane request failed: endpoint is temporarily unavailable. Check your quotas and/or contact our support.";
    expect(await refusal(login)).toMatchObject({ code: "XX000", message: unavailable });
    const sql = await fetch(`${server.url}/sql`, {
      method: "POST",
      headers: { "Neon-Connection-String": q.uri },
      body: JSON.stringify({ query: "SELECT 1", params: [] }),
    });
    expect(sql.status).toBe(400);
    expect(((await sql.json()) as { message: string }).message).toBe(unavailable);
    expect((await operations(q.id)).filter((o) => o.action === "start_compute")).toHaveLength(1);
    // Unlimited again: the next client wakes it.
    expect((await setQuota(0)).status).toBe(200);
    const again = client(login);
    await again.connect();
    const endedAgain = new Promise<{ code?: string }>((resolve) =>
      again.on("error", (err) => resolve(err as { code?: string })),
    );
    // A quota 20 s above what the month has used: the worker suspends the compute when an
    // advance reaches it, with its client still connected.
    const used = (await api("GET", `/projects/${q.id}`)).body.project.active_time_seconds as number;
    const raised = await setQuota(used + 20);
    expect(raised.body.operations).toEqual([]);
    await advance(10);
    expect((await again.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await advance(15);
    expect((await endedAgain).code).toBe("57P01");
    await again.end().catch(() => {});
    for (let i = 0; i < 400 && (await endpoint(q)).current_state !== "idle"; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await refusal(login)).toMatchObject({ code: "XX000", message: unavailable });
    expect((await setQuota(0)).status).toBe(200);
    expect((await one(login)).u).toBe(q.role);
  }, 60_000);
});

describe("lifecycle and activity", () => {
  it("suspend ends open connections with 57P01; the next connects share one wake, recorded as start_compute", async () => {
    const c = client({ user: p.role, password: p.password, options: `endpoint=${p.endpointId}` });
    await c.connect();
    const ended = new Promise<{ code?: string }>((resolve) =>
      c.on("error", (err) => resolve(err as { code?: string })),
    );
    const suspend = await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/suspend`);
    expect(suspend.status).toBe(200);
    await advance(5);
    expect((await ended).code).toBe("57P01");
    await c.end().catch(() => {});
    // The effect (the server's stop) completes outside the advance; its operation then finishes.
    await stateBecomes("idle");
    const startsBefore = (await operations(p.id)).filter((o) => o.action === "start_compute").length;
    const rows = await Promise.all(
      Array.from({ length: 5 }, () =>
        one(
          { user: p.role, password: p.password, options: `endpoint=${p.endpointId}` },
          "SELECT count(*)::int AS n FROM notes",
        ),
      ),
    );
    expect(rows).toEqual(Array.from({ length: 5 }, () => ({ n: 1 })));
    const starts = (await operations(p.id)).filter((o) => o.action === "start_compute");
    expect(starts.length).toBe(startsBefore + 1);
    expect(starts[0]?.status).toBe("finished");
  }, 60_000);

  it("a wake whose start fails (an armed fault) refuses the client and leaves no server behind", async () => {
    const suspend = await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/suspend`);
    expect(suspend.status).toBe(200);
    await advance(5);
    await stateBecomes("idle");
    const armed = await http(server.url, key, "POST", "/_emulator/faults", {
      action: "start_compute",
      count: 1,
      project_id: p.id,
      endpoint_id: p.endpointId,
    });
    expect(armed.status).toBe(201);
    const login = { user: p.role, password: p.password, options: `endpoint=${p.endpointId}` };
    expect(await refusal(login)).toMatchObject({
      code: "XX000",
      message: "Couldn't connect to compute node",
    });
    expect((await endpoint(p)).current_state).toBe("idle");
    expect((await operations(p.id))[0]).toMatchObject({ action: "start_compute", status: "failed" });
    const branchId = (await endpoint(p)).branch_id;
    const pidFile = path.join(dir, "db-data", "projects", p.id, "branches", branchId, "postmaster.pid");
    expect(fs.existsSync(path.dirname(pidFile))).toBe(true);
    expect(fs.existsSync(pidFile)).toBe(false);
    // The fault is spent: the next client wakes the endpoint.
    expect(await one(login, "SELECT count(*)::int AS n FROM notes")).toEqual({ n: 1 });
    expect((await endpoint(p)).current_state).toBe("active");
  }, 60_000);

  it("a suspend that overtakes a wake sends the waiting client's endpoint through another wake, as Neon's proxy retries", async () => {
    const q = await createProject("overtaken");
    const login = { user: q.role, password: q.password, options: `endpoint=${q.endpointId}` };
    const qEndpoint = async () =>
      (await api("GET", `/projects/${q.id}/endpoints/${q.endpointId}`)).body.endpoint;
    const startsOf = async () => (await operations(q.id)).filter((o) => o.action === "start_compute");
    for (let round = 0; round < 3; round++) {
      // Idle, with no operation left under way (the creation's start, then the suspend, done).
      await api("POST", `/projects/${q.id}/endpoints/${q.endpointId}/suspend`);
      await advance(5);
      for (let i = 0; i < 400 && (await qEndpoint()).current_state !== "idle"; i++)
        await new Promise((r) => setTimeout(r, 20));
      const startsBefore = (await startsOf()).length;
      const connecting = one(login, "SELECT 42 AS n").catch((err: Error) => err);
      // The client's wake is under way (its start_compute recorded, the server starting): a suspend now
      // comes after it, and the wake performs both.
      for (let i = 0; i < 500 && (await startsOf()).length === startsBefore; i++)
        await new Promise((r) => setImmediate(r));
      expect((await api("POST", `/projects/${q.id}/endpoints/${q.endpointId}/suspend`)).status).toBe(200);
      expect(await connecting).toEqual({ n: 42 });
    }
    const actions = (await operations(q.id)).map((o) => `${o.action}:${o.status}`);
    expect(actions.filter((a) => a.startsWith("start_compute")).every((a) => a.endsWith(":finished"))).toBe(
      true,
    );
  }, 60_000);

  it("a client waits for its branch's data: a new branch's copy, a restore — performed at once, without a clock advance", async () => {
    const mainId = (await api("GET", `/projects/${p.id}/branches`)).body.branches.find(
      (b: { default: boolean }) => b.default,
    ).id;
    const made = await api("POST", `/projects/${p.id}/branches`, {
      branch: { name: "restored-while-connecting" },
      endpoints: [{ type: "read_write" }],
    });
    expect(made.status).toBe(201);
    const child = { user: p.role, password: p.password, options: `endpoint=${made.body.endpoints[0].id}` };
    // The branch is still being made (manual clock, no advance): the connection has it made first.
    expect(await one(child, "SELECT count(*)::int AS n FROM notes")).toEqual({ n: 1 });
    await one(child, "CREATE TABLE child_only (n int)");

    const restored = await api("POST", `/projects/${p.id}/branches/${made.body.branch.id}/restore`, {
      source_branch_id: mainId,
    });
    expect(restored.status).toBe(200);
    // The compute still runs on the old data, but a client arriving now gets the parent's.
    expect(await one(child, "SELECT to_regclass('child_only') IS NULL AS gone")).toEqual({ gone: true });
    const ops = (await operations(p.id)).filter((o) => o.action === "create_branch");
    expect(ops.every((o) => o.status === "finished")).toBe(true);
  }, 60_000);

  it("an open connection keeps the endpoint from auto-suspending; the delay counts from the last connection's end", async () => {
    const patched = await api("PATCH", `/projects/${p.id}/endpoints/${p.endpointId}`, {
      endpoint: { suspend_timeout_seconds: 60 },
    });
    expect(patched.status).toBe(200);
    await advance(1);
    const c = client({ user: p.role, password: p.password, options: `endpoint=${p.endpointId}` });
    await c.connect();
    await advance(600);
    expect((await endpoint(p)).current_state).toBe("active");
    await c.end();
    // The door records the end (at the manual clock's time) once the socket closes.
    const now = (await http(server.url, key, "GET", "/_emulator/clock")).body.now;
    for (let i = 0; i < 100 && (await endpoint(p)).last_active !== now; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect((await endpoint(p)).last_active).toBe(now);
    await advance(59);
    expect((await endpoint(p)).current_state).toBe("active");
    await advance(2);
    await advance(5);
    await stateBecomes("idle");
    const last = (await operations(p.id))[0];
    expect(last?.action).toBe("suspend_compute");
  }, 60_000);

  it("an enabled logical replication subscription keeps its compute from auto-suspending, as Neon's apply workers do", async () => {
    const publisher = await api("POST", "/projects", {
      project: { name: "feed-publisher", settings: { enable_logical_replication: true } },
    });
    expect(publisher.status).toBe(201);
    const pub = publisher.body;
    const sub = await createProject("feed-subscriber");
    const on = (who: Project, sql: string) =>
      one({ user: who.role, password: who.password, options: `endpoint=${who.endpointId}` }, sql);
    const pubProject = {
      id: pub.project.id,
      endpointId: pub.endpoints[0].id,
      role: pub.roles[0].name,
      password: pub.roles[0].password,
    } as Project;
    passwords.push(pubProject.password);
    await on(pubProject, "CREATE TABLE feed (id int PRIMARY KEY)");
    await on(pubProject, "CREATE PUBLICATION feed FOR TABLE feed");
    await on(sub, "CREATE TABLE feed (id int PRIMARY KEY)");
    await on(
      sub,
      `CREATE SUBSCRIPTION feed CONNECTION '${pub.connection_uris[0].connection_uri}' PUBLICATION feed`,
    );
    const patched = await api("PATCH", `/projects/${sub.id}/endpoints/${sub.endpointId}`, {
      endpoint: { suspend_timeout_seconds: 60 },
    });
    expect(patched.status).toBe(200);
    // The compute's subscriptions are read with its roles, a second after the session's end.
    const held = async (n: number) => {
      const file = new Database(path.join(dir, "db.sqlite"), { readonly: true });
      try {
        for (let i = 0; i < 200; i++) {
          const row = file
            .prepare("SELECT open_connections AS n FROM endpoints WHERE id = ?")
            .get(sub.endpointId);
          if ((row as { n: number }).n === n) return;
          await new Promise((r) => setTimeout(r, 25));
        }
      } finally {
        file.close();
      }
      throw new Error(`the endpoint never held ${n} connection(s)`);
    };
    await held(1);
    await advance(600);
    expect((await endpoint(sub)).current_state).toBe("active");
    // …and it replicates meanwhile.
    await on(pubProject, "INSERT INTO feed VALUES (1)");
    let copied = 0;
    for (let i = 0; i < 200 && copied === 0; i++) {
      copied = (await on(sub, "SELECT count(*)::int AS n FROM feed")).n as number;
      if (copied === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(copied).toBe(1);
    // Disabled, it holds the compute no longer: the delay counts from then.
    await on(sub, "ALTER SUBSCRIPTION feed DISABLE");
    await held(0);
    await advance(61);
    await advance(5);
    for (let i = 0; i < 400 && (await endpoint(sub)).current_state !== "idle"; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect((await endpoint(sub)).current_state).toBe("idle");
  }, 60_000);

  it("a cancel request through the front door reaches the compute running the query", async () => {
    const config = { user: p.role, password: p.password, options: `endpoint=${p.endpointId}` };
    const running = client(config);
    await running.connect();
    try {
      const slow = running.query("SELECT pg_sleep(30)");
      const failed = slow.then(
        () => undefined,
        (err: { code?: string }) => err,
      );
      await new Promise((r) => setTimeout(r, 200));
      // A CancelRequest carries the backend key data the client was given, on a new connection.
      await sendCancelRequest(server.pgPort as number, running);
      expect((await failed)?.code).toBe("57014");
    } finally {
      await running.end();
    }
  });

  it("max_connections follows the minimum compute size", async () => {
    const q = await createProject("sizes");
    const patched = await api("PATCH", `/projects/${q.id}/endpoints/${q.endpointId}`, {
      endpoint: { autoscaling_limit_min_cu: 1, autoscaling_limit_max_cu: 2 },
    });
    expect(patched.status).toBe(200);
    const row = await one(
      { user: q.role, password: q.password, options: `endpoint=${q.endpointId}` },
      "SHOW max_connections",
    );
    expect(row.max_connections).toBe("450");
  });
});

describe("connection limits", () => {
  it("direct connections beyond the compute's max_connections get Postgres' 53300", async () => {
    const q = await createProject("limits");
    const config = { user: q.role, password: q.password, options: `endpoint=${q.endpointId}` };
    expect((await one(config, "SHOW max_connections")).max_connections).toBe("112");
    const open: pg.Client[] = [];
    let refused: { code?: string } | undefined;
    try {
      // 112 slots, 3 of them reserved for superusers (the emulator's cloud_admin).
      for (let batch = 0; batch < 12 && !refused; batch++) {
        const clients = Array.from({ length: 10 }, () => client(config));
        const results = await Promise.allSettled(clients.map((c) => c.connect()));
        results.forEach((r, i) => {
          if (r.status === "fulfilled") open.push(clients[i] as pg.Client);
          else refused ??= r.reason as { code?: string };
        });
      }
      expect(refused?.code).toBe("53300");
      // At most 109 at once; a backend of an earlier connection may still be exiting.
      expect(open.length).toBeGreaterThanOrEqual(100);
      expect(open.length).toBeLessThanOrEqual(109);
    } finally {
      await Promise.all(open.map((c) => c.end().catch(() => {})));
    }
    // The slots come back once the clients are gone.
    let back = false;
    for (let i = 0; i < 50 && !back; i++) {
      back = await one(config).then(
        () => true,
        () => false,
      );
      if (!back) await new Promise((r) => setTimeout(r, 100));
    }
    expect(back).toBe(true);
  }, 60_000);
});

/** Sends bytes on a raw socket and collects what comes back until the door closes it (or `ms` pass). */
function rawExchange(bytes: Buffer, ms = 5000): Promise<{ reply: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port: server.pgPort as number });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ reply: Buffer.concat(chunks), closed: false });
    }, ms);
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ reply: Buffer.concat(chunks), closed: true });
    });
    socket.on("connect", () => socket.write(bytes));
  });
}

function startupPacket(params: Record<string, string>): Buffer {
  const body = Buffer.concat([
    Buffer.from([0, 3, 0, 0]),
    Buffer.from(
      `${Object.entries(params)
        .map(([k, v]) => `${k}\0${v}\0`)
        .join("")}\0`,
    ),
  ]);
  const len = Buffer.alloc(4);
  len.writeInt32BE(body.length + 4);
  return Buffer.concat([len, body]);
}

describe("protocol versions", () => {
  it("a start-up asking for protocol 3.2 or protocol options (libpq 18) is told the door speaks 3.0 without them, as Postgres tells it, and goes on to its login", async () => {
    for (const endpoint of [p.endpointId, `${p.endpointId}-pooler`]) {
      const start = startupPacket({
        user: p.role,
        database: "neondb",
        options: `endpoint=${endpoint}`,
        "_pq_.test_option": "on",
      });
      start.writeInt16BE(2, 6);
      const { reply } = await rawExchange(start, 1000);
      const negotiated = reply.subarray(0, 1 + reply.readInt32BE(1));
      expect(negotiated.subarray(0, 1).toString()).toBe("v");
      expect(negotiated.readInt32BE(5)).toBe(0);
      expect(negotiated.readInt32BE(9)).toBe(1);
      expect(negotiated.subarray(13).toString()).toBe("_pq_.test_option\0");
      // Then the password is asked for (AuthenticationSASL).
      expect(reply.subarray(negotiated.length, negotiated.length + 1).toString()).toBe("R");
      expect(reply.readInt32BE(negotiated.length + 5)).toBe(10);
    }
  });
});

describe("bad input at the front door", () => {
  it("garbage, bad lengths, oversized and truncated messages get an error or a close, never a crash or a hang", async () => {
    const garbage = await rawExchange(Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    expect(garbage.closed).toBe(true);
    expect(garbage.reply.toString()).toContain("08P01");
    const huge = Buffer.alloc(8);
    huge.writeInt32BE(0x7fffffff, 0);
    huge.writeInt32BE(196608, 4);
    expect((await rawExchange(huge)).reply.toString()).toContain("invalid length of startup packet");
    const wrongVersion = startupPacket({ user: "x" });
    wrongVersion.writeInt16BE(9, 4);
    expect((await rawExchange(wrongVersion)).reply.toString()).toContain("unsupported frontend protocol 9.0");
    const noUser = await rawExchange(startupPacket({ database: "neondb" }));
    expect(noUser.reply.toString()).toContain("no PostgreSQL user name");
    // An oversized password message after a valid start-up.
    const start = startupPacket({ user: p.role, options: `endpoint=${p.endpointId}` });
    const big = Buffer.alloc(5 + 20);
    big.write("p", 0);
    big.writeInt32BE(50_000_000, 1);
    const oversized = await rawExchange(Buffer.concat([start, big]));
    expect(oversized.closed).toBe(true);
    expect(oversized.reply.toString()).toContain("invalid message length");
    // Not a password message where one is expected.
    const query = Buffer.from([0x51, 0, 0, 0, 13, ...Buffer.from("SELECT 1\0")]);
    expect((await rawExchange(Buffer.concat([start, query]))).reply.toString()).toContain(
      "expected password response",
    );
    // Half a start-up packet, then silence: the door gives up after NEON_EMULATOR_PG_AUTH_TIMEOUT.
    const slow = await rawExchange(start.subarray(0, 10), 6000);
    expect(slow.closed).toBe(true);
    // A client that sends SSLRequest and then no TLS handshake.
    const ssl = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
    const silentTls = await rawExchange(ssl, 6000);
    expect(silentTls.reply.subarray(0, 1).toString()).toBe("S");
    expect(silentTls.closed).toBe(true);
    // One that sends its start-up in the clear with the SSLRequest (before reading the answer): refused.
    const early = await rawExchange(Buffer.concat([ssl, start]));
    expect(early.reply.subarray(0, 1).toString()).toBe("S");
    expect(early.reply.toString()).toContain("received unencrypted data after SSL request");
    expect(early.closed).toBe(true);
    // Clients that vanish mid-handshake.
    await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<void>((resolve) => {
            const s = net.connect({ host: "127.0.0.1", port: server.pgPort as number }, () => {
              s.write(start.subarray(0, 3));
              s.destroy();
              resolve();
            });
            s.on("error", () => resolve());
          }),
      ),
    );
    // The whole start-up must fit in NEON_EMULATOR_PG_AUTH_TIMEOUT (2 s), however the bytes trickle.
    const trickled = await new Promise<number>((resolve) => {
      const t0 = Date.now();
      const s = net.connect({ host: "127.0.0.1", port: server.pgPort as number });
      let at = 0;
      const timer = setInterval(() => {
        if (at < start.length - 1) s.write(start.subarray(at, ++at));
      }, 500);
      s.on("error", () => {});
      s.on("close", () => {
        clearInterval(timer);
        resolve(Date.now() - t0);
      });
    });
    expect(trickled).toBeLessThan(4000);
    const gss = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30]);
    expect((await rawExchange(Buffer.concat([gss, gss]))).reply.toString()).toContain(
      "unexpected GSSENCRequest",
    );
    // Refused clients that never close their side are dropped: no socket is held open.
    const fds = () => fs.readdirSync(`/proc/${server.proc.pid}/fd`).length;
    const before = fds();
    const halfOpen = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect({ host: "127.0.0.1", port: server.pgPort as number, allowHalfOpen: true });
            s.on("error", () => {});
            s.on("connect", () => s.write(startupPacket({ user: "x", options: "endpoint=ep-nope-1" })));
            s.once("data", () => resolve(s));
          }),
      ),
    );
    expect(fds()).toBeGreaterThanOrEqual(before + 15);
    await new Promise((r) => setTimeout(r, 3000));
    expect(fds()).toBeLessThanOrEqual(before + 2);
    for (const s of halfOpen) s.destroy();
    // Still serving.
    expect((await fetch(`${server.url}/_emulator/health`)).status).toBe(200);
    expect((await one({ user: p.role, password: p.password, options: `endpoint=${p.endpointId}` })).u).toBe(
      p.role,
    );
  }, 60_000);
});

describe("secrets", () => {
  it("no role password appears in the server's output", () => {
    expect(passwords.length).toBeGreaterThan(2);
    const output = server.stdout() + server.stderr();
    for (const password of passwords) expect(output).not.toContain(password);
  });
});
