import { Pool as NeonPool, neonConfig } from "@neondatabase/serverless";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import ws from "ws";
import {
  type CreatedProject,
  computeClient,
  createdProject,
  startComputeServer,
} from "../helpers/compute.js";
import { http, type RunningServer, randomKey } from "../helpers/server.js";

/**
 * What computes move, metered against a real server on the manual clock: the bytes the front door
 * sends to clients (data_transfer_bytes; public network transfer) over TCP, the pooler, WebSocket
 * tunnels and SQL over HTTP, and the WAL a branch's primary writes (written_data_bytes), in
 * projects, branches, consumption history and quotas. One server (and its computes) for the file.
 */
let server: RunningServer;
const key = randomKey();

beforeAll(async () => {
  ({ server } = await startComputeServer(key, {
    NEON_EMULATOR_CLOCK: "manual",
    NEON_EMULATOR_CLOCK_START: "2026-03-10T08:00:00Z",
  }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const { api, clientOf } = computeClient(() => server, key);
const advance = (seconds: number) => http(server.url, key, "POST", "/_emulator/clock/advance", { seconds });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Project = CreatedProject;

async function createProject(name: string): Promise<Project> {
  const res = await api("POST", "/projects", { project: { name } });
  expect(res.status).toBe(201);
  return createdProject(res.body);
}

function client(p: Project, endpoint = p.endpointId): pg.Client {
  return clientOf(endpoint, p.role, p.password, "neondb");
}

/** Runs statements on one connection of the project's role through the front door; the last one's rows. */
async function run(p: Project, ...statements: string[]): Promise<unknown[]> {
  const c = client(p);
  await c.connect();
  try {
    let rows: unknown[] = [];
    for (const sql of statements) rows = (await c.query(sql)).rows;
    return rows;
  } finally {
    await c.end();
  }
}

/** A query over SQL over HTTP (`POST /sql`), with the connection string given. */
function sqlOverHttp(connectionString: string, query: string): Promise<Response> {
  return fetch(`${server.url}/sql`, {
    method: "POST",
    headers: { "Neon-Connection-String": connectionString },
    body: JSON.stringify({ query, params: [] }),
  });
}

async function figures(p: Project) {
  const project = (await api("GET", `/projects/${p.id}`)).body.project;
  const branch = (await api("GET", `/projects/${p.id}/branches/${p.branchId}`)).body.branch;
  return {
    transfer: project.data_transfer_bytes as number,
    written: project.written_data_bytes as number,
    branchTransfer: branch.data_transfer_bytes as number,
    branchWritten: branch.written_data_bytes as number,
  };
}

/** Waits (real time) until the project's figures satisfy `done`; the metering job records every second. */
async function figuresWhen(p: Project, done: (f: Awaited<ReturnType<typeof figures>>) => boolean) {
  let f = await figures(p);
  for (let i = 0; i < 150 && !done(f); i++) {
    await sleep(100);
    f = await figures(p);
  }
  return f;
}

async function endpointState(p: Project): Promise<string> {
  return (await api("GET", `/projects/${p.id}/endpoints/${p.endpointId}`)).body.endpoint.current_state;
}

async function stateBecomes(p: Project, state: string): Promise<void> {
  for (let i = 0; i < 400 && (await endpointState(p)) !== state; i++) await sleep(50);
  expect(await endpointState(p)).toBe(state);
}

/** Suspends the endpoint and waits for its server to stop (its WAL is measured then). */
async function suspend(p: Project): Promise<void> {
  expect((await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/suspend`)).status).toBe(200);
  await advance(5);
  await stateBecomes(p, "idle");
}

describe("data transfer: bytes sent to clients", () => {
  it("counts what the compute sends a TCP client, a pooled client, a WebSocket tunnel and an HTTP query, in the project and its branch", async () => {
    const p = await createProject("transfer");
    const c = client(p);
    await c.connect();
    // The login's messages are the front door's, not the compute's answers: nothing is counted.
    await sleep(1500);
    expect(await figures(p)).toEqual({ transfer: 0, written: 0, branchTransfer: 0, branchWritten: 0 });
    // One row of 100,000 bytes: RowDescription, DataRow, CommandComplete and ReadyForQuery.
    await c.query("SELECT repeat('x', 100000) AS big");
    const tcp = await figuresWhen(p, (f) => f.transfer > 0);
    expect(tcp.transfer).toBeGreaterThanOrEqual(100_000);
    expect(tcp.transfer).toBeLessThan(100_200);
    expect(tcp.branchTransfer).toBe(tcp.transfer);
    await c.end();

    // The pooler (transaction mode) sends the client what the server session answers.
    const pooled = client(p, `${p.endpointId}-pooler`);
    await pooled.connect();
    await pooled.query("SELECT repeat('y', 30000) AS big");
    await pooled.end();
    const afterPooled = await figuresWhen(p, (f) => f.transfer >= tcp.transfer + 30_000);
    expect(afterPooled.transfer - tcp.transfer).toBeGreaterThanOrEqual(30_000);
    expect(afterPooled.transfer - tcp.transfer).toBeLessThan(30_200);

    // The serverless driver's WebSocket tunnel is relayed as TCP is.
    neonConfig.webSocketConstructor = ws;
    neonConfig.wsProxy = () => `${new URL(server.url).host}/v2`;
    neonConfig.useSecureWebSocket = false;
    const tunnel = new NeonPool({ connectionString: p.uri });
    await tunnel.query("SELECT repeat('w', 20000) AS big");
    await tunnel.end();
    const afterWs = await figuresWhen(p, (f) => f.transfer >= afterPooled.transfer + 20_000);
    expect(afterWs.transfer - afterPooled.transfer).toBeGreaterThanOrEqual(20_000);
    expect(afterWs.transfer - afterPooled.transfer).toBeLessThan(20_200);

    // SQL over HTTP: the answer's JSON, byte for byte (what the proxy counts).
    const res = await sqlOverHttp(p.uri, "SELECT repeat('é', 20000) AS big");
    expect(res.status).toBe(200);
    const answer = Buffer.byteLength(await res.text());
    expect(answer).toBeGreaterThan(40_000);
    const afterHttp = await figuresWhen(p, (f) => f.transfer > afterWs.transfer);
    expect(afterHttp.transfer - afterWs.transfer).toBe(answer);
    // A refused query (a Postgres error) and a wrong password send no compute bytes.
    const failed = await sqlOverHttp(p.uri, "SELECT * FROM missing_table");
    expect(failed.status).toBe(400);
    const wrongPassword = await sqlOverHttp(p.uri.replace(p.password, "wrong"), "SELECT repeat('x', 1000)");
    expect(wrongPassword.status).toBe(400);
    await expect(
      new pg.Client({ connectionString: p.uri.replace(p.password, "wrong") }).connect(),
    ).rejects.toMatchObject({ code: "28P01" });
    await sleep(1500);
    expect((await figures(p)).transfer).toBe(afterHttp.transfer);
  }, 60_000);
});

describe("written data: the WAL a branch's primary writes", () => {
  it("counts a branch's own writes when its compute stops, and starts a new branch at zero", async () => {
    const p = await createProject("written");
    // About 2 MB of rows (and their WAL).
    await run(
      p,
      "CREATE TABLE notes (body text)",
      "INSERT INTO notes SELECT repeat('z', 1000) FROM generate_series(1, 2000)",
    );
    await suspend(p);
    const stopped = await figures(p);
    expect(stopped.written).toBeGreaterThan(2_000_000);
    expect(stopped.written).toBeLessThan(8_000_000);
    expect(stopped.branchWritten).toBe(stopped.written);

    // A child starts as a copy: the parent's WAL is not the child's written data.
    const created = await api("POST", `/projects/${p.id}/branches`, {
      branch: { name: "child" },
      endpoints: [{ type: "read_write" }],
    });
    expect(created.status).toBe(201);
    const child = { ...p, branchId: created.body.branch.id, endpointId: created.body.endpoints[0].id };
    const c2 = client(child);
    await c2.connect();
    expect((await c2.query("SELECT count(*)::int AS n FROM notes")).rows).toEqual([{ n: 2000 }]);
    await c2.query("INSERT INTO notes SELECT repeat('w', 1000) FROM generate_series(1, 500)");
    await c2.end();
    await suspend(child);
    const childBranch = (await api("GET", `/projects/${p.id}/branches/${child.branchId}`)).body.branch;
    expect(childBranch.written_data_bytes).toBeGreaterThan(500_000);
    expect(childBranch.written_data_bytes).toBeLessThan(stopped.written);
    const project = (await figures(p)).written;
    expect(project).toBe(stopped.written + childBranch.written_data_bytes);
    // The branch list shows each branch's own figure.
    const list = (await api("GET", `/projects/${p.id}/branches`)).body.branches as {
      id: string;
      written_data_bytes: number;
    }[];
    expect(Object.fromEntries(list.map((b) => [b.id, b.written_data_bytes]))).toEqual({
      [p.branchId]: stopped.written,
      [child.branchId]: childBranch.written_data_bytes,
    });
  }, 90_000);

  it("a copy of a running branch charges neither branch (the backup's segment switches are the emulator's)", async () => {
    const p = await createProject("online");
    const c = client(p);
    await c.connect();
    await c.query("CREATE TABLE notes AS SELECT repeat('o', 1000) AS body FROM generate_series(1, 500)");
    const created = await api("POST", `/projects/${p.id}/branches`, {
      branch: { name: "copy" },
      endpoints: [{ type: "read_write" }],
    });
    expect(created.status).toBe(201);
    const child = { ...p, branchId: created.body.branch.id, endpointId: created.body.endpoints[0].id };
    const c2 = client(child);
    await c2.connect();
    expect((await c2.query("SELECT count(*)::int AS n FROM notes")).rows).toEqual([{ n: 500 }]);
    await c2.end();
    await c.end();
    await suspend(child);
    await suspend(p);
    const parent = await figures(p);
    const copy = (await api("GET", `/projects/${p.id}/branches/${child.branchId}`)).body.branch;
    // The parent wrote about 0.5 MB; each segment switch would have added up to 16 MB.
    expect(parent.branchWritten).toBeGreaterThan(500_000);
    expect(parent.branchWritten).toBeLessThan(2_000_000);
    expect(copy.written_data_bytes).toBeLessThan(200_000);
  }, 60_000);

  it("a restore starts the branch's count again on its new data (the source's WAL is not the branch's)", async () => {
    const p = await createProject("restore");
    await run(p, "CREATE TABLE r (body text)");
    await suspend(p);
    const created = await api("POST", `/projects/${p.id}/branches`, {
      branch: { name: "restored" },
      endpoints: [{ type: "read_write" }],
    });
    expect(created.status).toBe(201);
    const child = { ...p, branchId: created.body.branch.id, endpointId: created.body.endpoints[0].id };
    const writes = async (on: Project, rows: number) => {
      await run(on, `INSERT INTO r SELECT repeat('r', 1000) FROM generate_series(1, ${rows})`);
      await suspend(on);
    };
    await writes(child, 200);
    await writes(p, 3000);
    const childWritten = async () =>
      (await api("GET", `/projects/${p.id}/branches/${child.branchId}`)).body.branch
        .written_data_bytes as number;
    const before = await childWritten();
    expect(before).toBeGreaterThan(200_000);

    // The child takes the parent's data, 3 MB of WAL further on than its own.
    const restored = await api("POST", `/projects/${p.id}/branches/${child.branchId}/restore`, {
      source_branch_id: p.branchId,
      preserve_under_name: "restored_before",
    });
    expect(restored.status).toBe(200);
    await advance(5);
    for (const op of restored.body.operations as { id: string }[])
      for (let i = 0; i < 200; i++) {
        const status = (await api("GET", `/projects/${p.id}/operations/${op.id}`)).body.operation.status;
        if (status === "finished") break;
        await sleep(50);
      }
    expect(await run(child, "SELECT count(*)::int AS n FROM r")).toEqual([{ n: 3000 }]);
    await suspend(child);
    // Only what the child's own compute wrote on its new data counts (its start, its stop).
    expect((await childWritten()) - before).toBeLessThan(300_000);
  }, 90_000);

  it("measures a running primary that clients use, without a stop", async () => {
    const p = await createProject("running");
    const c = client(p);
    await c.connect();
    await c.query("CREATE TABLE t AS SELECT repeat('r', 1000) AS body FROM generate_series(1, 1000)");
    // The metering job asks the primaries clients used where their WAL ends every ten seconds.
    let f = await figures(p);
    for (let i = 0; i < 150 && f.written < 1_000_000; i++) {
      await sleep(100);
      f = await figures(p);
    }
    expect(f.written).toBeGreaterThan(1_000_000);
    expect(await endpointState(p)).toBe("active");
    await c.end();
  }, 60_000);

  it("a connection that keeps querying moves the endpoint's last_active with the clock; one that stays idle does not", async () => {
    const p = await createProject("busy");
    const lastActive = async () =>
      Date.parse((await api("GET", `/projects/${p.id}/endpoints/${p.endpointId}`)).body.endpoint.last_active);
    const c = client(p);
    await c.connect();
    try {
      await c.query("SELECT 1");
      // The metering second that carries the answer passes before the clock moves.
      await sleep(1500);
      const opened = await lastActive();
      // Idle: the clock moves, last_active stays where the connection opened.
      await advance(30);
      await sleep(1500);
      expect(await lastActive()).toBe(opened);
      // Busy: the metering second that carries its answers stamps the account's time.
      await c.query("SELECT repeat('x', 1000)");
      let now = opened;
      for (let i = 0; i < 50 && now === opened; i++) {
        await sleep(100);
        now = await lastActive();
      }
      expect(now).toBe(opened + 30_000);
    } finally {
      await c.end();
    }
  }, 60_000);
});

describe("consumption history", () => {
  it("shows the hour's public network transfer (v2) and written data (v1) as the project does", async () => {
    const p = await createProject("history");
    await run(
      p,
      "CREATE TABLE h AS SELECT repeat('h', 500) AS body FROM generate_series(1, 1000)",
      "SELECT repeat('x', 10000)",
    );
    await suspend(p);
    const f = await figuresWhen(p, (x) => x.transfer > 10_000 && x.written > 0);
    const org = (await api("GET", `/projects/${p.id}`)).body.project.org_id as string;
    const window = `from=2026-03-10T00:00:00Z&to=2026-03-11T00:00:00Z&org_id=${org}`;
    const v2 = await api(
      "GET",
      `/consumption_history/v2/projects?${window}&granularity=daily&project_ids=${p.id}&metrics=public_network_transfer_bytes,private_network_transfer_bytes`,
    );
    expect(v2.status).toBe(200);
    const metrics = v2.body.projects[0].periods[0].consumption[0].metrics;
    expect(metrics).toEqual([
      { metric_name: "public_network_transfer_bytes", value: f.transfer },
      { metric_name: "private_network_transfer_bytes", value: 0 },
    ]);
    const branches = await api(
      "GET",
      `/consumption_history/v2/branches?${window}&granularity=daily&project_ids=${p.id}&metrics=public_network_transfer_bytes`,
    );
    expect(branches.body.branches[0].periods[0].consumption[0].metrics).toEqual([
      { metric_name: "public_network_transfer_bytes", value: f.transfer },
    ]);
    const v1 = await api(
      "GET",
      `/consumption_history/projects?${window}&granularity=hourly&project_ids=${p.id}`,
    );
    expect(v1.status).toBe(200);
    const hours = v1.body.projects[0].periods[0].consumption as {
      timeframe_start: string;
      written_data_bytes: number;
    }[];
    const written = hours.filter((h) => h.written_data_bytes > 0);
    expect(written).toEqual([expect.objectContaining({ timeframe_start: "2026-03-10T08:00:00Z" })]);
    expect(written[0]?.written_data_bytes).toBe(f.written);
  }, 60_000);
});

describe("data quotas", () => {
  const unavailable =
    "Control plane request failed: endpoint is temporarily unavailable. Check your quotas and/or contact our support.";

  it("a data_transfer_bytes quota reached suspends the computes and refuses starts until raised", async () => {
    const p = await createProject("transfer-quota");
    const c = client(p);
    await c.connect();
    const ended = new Promise<{ code?: string }>((resolve) =>
      c.on("error", (err) => resolve(err as { code?: string })),
    );
    await c.query("SELECT 1");
    const before = (await figuresWhen(p, (f) => f.transfer > 0)).transfer;
    const patched = await api("PATCH", `/projects/${p.id}`, {
      project: { settings: { quota: { data_transfer_bytes: before + 5000 } } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.operations).toEqual([]);
    await c.query("SELECT repeat('q', 10000)");
    // The record of those bytes finds the quota used up and starts the compute's suspend (no clock
    // advance needed), which ends its client.
    const suspends = async () =>
      ((await api("GET", `/projects/${p.id}/operations`)).body.operations as { action: string }[]).filter(
        (o) => o.action === "suspend_compute",
      ).length;
    for (let i = 0; i < 50 && (await suspends()) === 0; i++) await sleep(100);
    expect(await suspends()).toBe(1);
    await advance(5);
    expect((await ended).code).toBe("57P01");
    await c.end().catch(() => {});
    await stateBecomes(p, "idle");
    const start = await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/start`);
    expect(start.status).toBe(422);
    expect(start.body.code).toBe("DATA_TRANSFER_QUOTA_EXCEEDED");
    const refused = client(p);
    await expect(refused.connect()).rejects.toMatchObject({ code: "XX000", message: unavailable });
    // Unlimited again: the next client wakes it.
    expect(
      (
        await api("PATCH", `/projects/${p.id}`, {
          project: { settings: { quota: { data_transfer_bytes: 0 } } },
        })
      ).status,
    ).toBe(200);
    const again = client(p);
    await again.connect();
    expect((await again.query("SELECT 2 AS two")).rows).toEqual([{ two: 2 }]);
    await again.end();
  }, 60_000);

  it("a written_data_bytes quota reached (measured at the stop) refuses starts with Neon's reason", async () => {
    const p = await createProject("written-quota");
    await run(p, "CREATE TABLE w AS SELECT repeat('w', 1000) AS body FROM generate_series(1, 1000)");
    expect(
      (
        await api("PATCH", `/projects/${p.id}`, {
          project: { settings: { quota: { written_data_bytes: 500_000 } } },
        })
      ).status,
    ).toBe(200);
    await suspend(p);
    expect((await figures(p)).written).toBeGreaterThan(500_000);
    const start = await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/start`);
    expect(start.status).toBe(422);
    expect(start.body.code).toBe("WRITTEN_DATA_QUOTA_EXCEEDED");
    expect(start.body.message).toContain("written_data_bytes quota of 500000");
  }, 60_000);
});
