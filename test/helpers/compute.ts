import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { expect } from "vitest";
import { http, type RunningServer, startServer, tempDir } from "./server.js";

/** Waits up to `ms` (10 s unless given) for `check` to hold, then asserts it. */
export async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (let waited = 0; waited < ms && !(await check()); waited += 100)
    await new Promise((r) => setTimeout(r, 100));
  expect(await check()).toBe(true);
}

/**
 * What the suites against a server with real computes share: the API under /api/v2, waiting for
 * operations, and clients of an endpoint through the front door. `server` is read at each call,
 * so a suite that restarts its server keeps using these.
 */
export function computeClient(server: () => RunningServer, key: string) {
  const api = (method: string, p: string, body?: unknown) =>
    http(server().url, key, method, `/api/v2${p}`, body);

  /** Polls an operation until it is finished or failed (for 300 polls, about 15 s, unless `polls` says). */
  async function settled(
    projectId: string,
    operationId: string,
    polls = 300,
  ): Promise<{ status: string; error?: string }> {
    for (let i = 0; i < polls; i++) {
      const res = await api("GET", `/projects/${projectId}/operations/${operationId}`);
      const op = res.body.operation;
      if (op.status === "finished" || op.status === "failed") return op;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`operation ${operationId} did not settle`);
  }

  async function allSettled(projectId: string, ops: { id: string }[]) {
    const results = [];
    for (const op of ops) results.push(await settled(projectId, op.id));
    // A failed operation shows its error in the assertion's output.
    expect(results.map((r) => (r.status === "failed" ? `failed: ${r.error}` : r.status))).toEqual(
      ops.map(() => "finished"),
    );
  }

  /** A client of an endpoint through the front door (the endpoint named in `options`, as the API's URIs do). */
  function clientOf(endpointId: string, user: string, password: string, database: string): pg.Client {
    return new pg.Client({
      host: "127.0.0.1",
      port: server().pgPort,
      user,
      password,
      database,
      options: `endpoint=${endpointId}`,
    });
  }

  async function query(endpointId: string, user: string, password: string, database: string, sql: string) {
    const client = clientOf(endpointId, user, password, database);
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  }

  return { api, settled, allSettled, clientOf, query };
}

/**
 * For suites on the manual clock (branch history): operations finish as the clock passes their
 * time, so each wait advances it `settleSeconds` (past the longest operation the suite's server
 * runs) and then polls; projects, branches with a read_write endpoint, and SQL on `neondb`.
 */
export function manualClockClient(server: () => RunningServer, key: string, settleSeconds = 1) {
  const client = computeClient(server, key);
  const { api, query, settled } = client;

  async function advance(seconds: number): Promise<number> {
    const res = await http(server().url, key, "POST", "/_emulator/clock/advance", { seconds });
    expect(res.status).toBe(200);
    return Date.parse(res.body.now);
  }

  async function allSettled(projectId: string, ops: { id: string }[]): Promise<void> {
    await advance(settleSeconds);
    const results = [];
    for (const op of ops) results.push(await settled(projectId, op.id));
    expect(results.map((r) => `${r.status} ${r.error ?? ""}`.trim())).toEqual(ops.map(() => "finished"));
  }

  async function createProject(name: string, extra: Record<string, unknown> = {}): Promise<CreatedProject> {
    const res = await api("POST", "/projects", { project: { name, ...extra } });
    expect(res.status).toBe(201);
    await allSettled(res.body.project.id, res.body.operations);
    return createdProject(res.body);
  }

  function sql(p: CreatedProject, text: string, endpoint = p.endpointId) {
    return query(endpoint, p.role, p.password, "neondb", text);
  }

  /** Creates a branch with a read_write endpoint and waits for its operations; returns the response body. */
  async function branch(p: CreatedProject, body: Record<string, unknown>) {
    const res = await api("POST", `/projects/${p.id}/branches`, {
      branch: body,
      endpoints: [{ type: "read_write" }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await allSettled(p.id, res.body.operations);
    return res.body;
  }

  return { ...client, advance, allSettled, createProject, sql, branch };
}

/** A project a `POST /projects` made: its ids, its role's credentials and the connection URI the API handed out. */
export interface CreatedProject {
  id: string;
  branchId: string;
  endpointId: string;
  role: string;
  password: string;
  uri: string;
}

/** What a `POST /projects` response body says of the project it made. */
export function createdProject(
  // biome-ignore lint/suspicious/noExplicitAny: a response body, read field by field
  body: any,
): CreatedProject {
  return {
    id: body.project.id,
    branchId: body.branch.id,
    endpointId: body.endpoints[0].id,
    role: body.roles[0].name,
    password: body.roles[0].password,
    uri: body.connection_uris[0].connection_uri,
  };
}

/**
 * A server with real computes (NEON_EMULATOR_COMPUTE=postgres, the front door on a free port) on a
 * new folder, with `env` besides: the file's one server. The servers run as an unprivileged user
 * when the tests run as root, so the folder is made readable to it.
 */
export async function startComputeServer(
  key: string,
  env: Record<string, string> = {},
): Promise<{ server: RunningServer; dir: string }> {
  const dir = tempDir();
  fs.chmodSync(dir, 0o755);
  const server = await startServer({
    NEON_EMULATOR_DB: path.join(dir, "db.sqlite"),
    NEON_EMULATOR_API_KEY: key,
    NEON_EMULATOR_COMPUTE: "postgres",
    NEON_EMULATOR_PG_PORT: "0",
    ...env,
  });
  return { server, dir };
}

/** A file's ext4 attribute letters, as `lsattr -d` prints them. */
export function fileFlags(file: string): string {
  return execFileSync("lsattr", ["-d", file], { encoding: "utf8" }).split(" ")[0] ?? "";
}

/**
 * Whether the temporary folder's file system takes `chattr +T` (ext4 on Linux), the mark the
 * compute driver sets on the folders branch copies are made in.
 */
export function takesTopMark(): boolean {
  if (process.platform !== "linux") return false;
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), "top-mark-"));
  try {
    execFileSync("chattr", ["+T", probe], { stdio: "ignore" });
    return fileFlags(probe).includes("T");
  } catch {
    return false;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

/**
 * Sends a CancelRequest for a node-postgres client's session (the backend key data it was given)
 * to the front door on a new connection, as libpq does; resolves once the door has closed it.
 */
export function sendCancelRequest(port: number, client: pg.Client): Promise<void> {
  const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(80877102, 4);
  packet.writeInt32BE(processID, 8);
  packet.writeInt32BE(secretKey, 12);
  return new Promise<void>((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.end(packet));
    socket.on("close", () => resolve());
    socket.on("error", () => resolve());
  });
}

/**
 * What the tests do behind the emulator's back on the servers of its data folder (`<dir>/db-data`,
 * read when called): a branch's server's pid file, and sessions as the emulator's administrator.
 */
export function behindTheBack(dir: () => string) {
  /** The pid file of the server on a branch's folder (its first line: the postmaster's pid; its fourth: its port). */
  function postmasterPidFile(on: { projectId: string; branchId: string }): string {
    return path.join(dir(), "db-data", "projects", on.projectId, "branches", on.branchId, "postmaster.pid");
  }

  /** A session of the emulator's administrator on a server's own port. */
  function adminClient(port: number, database: string): pg.Client {
    return new pg.Client({
      host: "127.0.0.1",
      port,
      user: "cloud_admin",
      password: fs.readFileSync(path.join(dir(), "db-data", "admin-password"), "utf8").trim(),
      database,
    });
  }

  /** Runs `sql` as the emulator's administrator on the running server of `on`'s branch. */
  async function asAdmin(on: { projectId: string; branchId: string }, sql: string, database = "postgres") {
    const port = Number(fs.readFileSync(postmasterPidFile(on), "utf8").split("\n")[3]);
    const admin = adminClient(port, database);
    await admin.connect();
    try {
      return (await admin.query(sql)).rows;
    } finally {
      await admin.end();
    }
  }

  return { postmasterPidFile, adminClient, asAdmin };
}
