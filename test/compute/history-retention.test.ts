import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CreatedProject, manualClockClient, startComputeServer } from "../helpers/compute.js";
import { type RunningServer, randomKey } from "../helpers/server.js";

/**
 * Branch history kept for the project's history_retention_seconds, on real computes and the manual
 * clock: WAL archived before the window goes once the base is rolled past it (apply_storage_config
 * prunes at once), and points inside the window still replay. A branch's create takes 5 s here, so
 * a pruning can run between a create at a point being accepted and its data being made. One
 * server (and its computes) for the file.
 */
let server: RunningServer;
let dir: string;
const key = randomKey();
const CREATE_MS = 5000;

beforeAll(async () => {
  ({ server, dir } = await startComputeServer(key, {
    NEON_EMULATOR_CLOCK: "manual",
    NEON_EMULATOR_CLOCK_START: "2026-05-04T09:00:00Z",
    NEON_EMULATOR_OPERATION_MS: `create_branch=${CREATE_MS}`,
  }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const { api, settled, advance, allSettled, createProject, sql, branch } = manualClockClient(
  () => server,
  key,
  CREATE_MS / 1000 + 1,
);

type Project = CreatedProject;

/** Suspends an endpoint: its server stops, and its WAL segment is archived. */
async function suspend(p: Project, endpointId = p.endpointId): Promise<void> {
  const suspended = await api("POST", `/projects/${p.id}/endpoints/${endpointId}/suspend`);
  expect(suspended.status).toBe(200);
  await allSettled(p.id, suspended.body.operations);
}

/** Changes the project's retention and waits for its apply_storage_config (the pruning). */
async function retain(p: Project, seconds: number): Promise<void> {
  const changed = await api("PATCH", `/projects/${p.id}`, {
    project: { history_retention_seconds: seconds },
  });
  expect(changed.status).toBe(200);
  await allSettled(
    p.id,
    changed.body.operations.filter((o: { action: string }) => o.action === "apply_storage_config"),
  );
}

const iso = (ms: number) => new Date(ms).toISOString();
const values = (rows: Record<string, unknown>[]) => rows.map((r) => r.v);

describe("history kept for the project's history_retention_seconds", () => {
  let p: Project;
  let childEndpoint = "";
  let childId = "";
  let historyDir = "";
  let earlyLsn = "";
  let before: string[] = [];
  /** A branch's archived WAL segments, by name. */
  const segments = (branchId: string) => {
    const projectDir = path.join(dir, "db-data", "projects", p.id);
    const id = fs.readFileSync(path.join(projectDir, "branches", branchId, "neon_history"), "utf8");
    return fs
      .readdirSync(path.join(historyDir, id))
      .filter((name) => /^[0-9A-F]{24}\.gz$/.test(name))
      .sort();
  };
  /** Suspends an endpoint and wakes it with a write. */
  const cycle = async (endpointId: string, write: string) => {
    await suspend(p, endpointId);
    await sql(p, write, endpointId);
  };

  it("WAL archived before the window goes once the retention changes; points inside it still replay", async () => {
    p = await createProject("retention", { history_retention_seconds: 3600 });
    historyDir = path.join(dir, "db-data", "projects", p.id, "history");
    await sql(p, "CREATE TABLE t (v int)");
    await sql(p, "INSERT INTO t VALUES (1)");
    earlyLsn = String((await sql(p, "SELECT pg_current_wal_lsn()::text AS lsn"))[0]?.lsn);
    const child = await branch(p, { name: "child" });
    childEndpoint = child.endpoints[0].id;
    childId = child.branch.id;
    // A few stops of each compute: the child's history has WAL of its own to roll its base on.
    for (const v of [11, 12, 13]) await cycle(childEndpoint, `INSERT INTO t VALUES (${v})`);
    await cycle(p.endpointId, "INSERT INTO t VALUES (2)");
    await cycle(p.endpointId, "INSERT INTO t VALUES (3)");
    await suspend(p);
    before = segments(p.branchId);
    expect(before.length).toBeGreaterThanOrEqual(3);
    const childBefore = segments(childId);

    await advance(2 * 3600); // what was written so far is now out of the window
    await sql(p, "INSERT INTO t VALUES (4)");
    const t4 = await advance(60);
    await sql(p, "INSERT INTO t VALUES (5)");
    await sql(p, "INSERT INTO t VALUES (14)", childEndpoint);
    await advance(60);
    for (const id of [p.endpointId, childEndpoint]) await suspend(p, id);
    await retain(p, 3000);

    // Main's segments archived before the window are gone, but for the last: its base replays from there.
    const after = segments(p.branchId);
    expect(after[0]).toBe(before[before.length - 1]);
    for (const name of before.slice(0, -1)) expect(after).not.toContain(name);
    // The child's base no longer needs main's WAL: it keeps its own from where its base replays.
    expect(segments(childId)[0]).not.toBe(childBefore[0]);
    expect(fs.readdirSync(path.join(dir, "db-data", "projects", p.id, "branches"))).toEqual(
      expect.not.arrayContaining([expect.stringMatching(/^\.at-/)]),
    );

    // A point inside the window replays from the new base (through the WAL kept).
    const at = await branch(p, { name: "at-t4", parent_timestamp: iso(t4 - 30_000) });
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", at.endpoints[0].id))).toEqual([1, 2, 3, 4]);
    const childAt = await branch(p, {
      name: "child-at-t4",
      parent_id: childId,
      parent_timestamp: iso(t4 - 30_000),
    });
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", childAt.endpoints[0].id))).toEqual([
      1, 11, 12, 13,
    ]);
    // The branches hold all they did.
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v"))).toEqual([1, 2, 3, 4, 5]);
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", childEndpoint))).toEqual([1, 11, 12, 13, 14]);
  });

  it("a branch continuing the history from an older point keeps its parent's WAL from there", async () => {
    const q = await createProject("retention-held", { history_retention_seconds: 3600 });
    const stop = () => suspend(q);
    await sql(q, "CREATE TABLE t (v int)");
    await sql(q, "INSERT INTO t VALUES (1)");
    await stop();
    // No compute ever runs on it: its history has no WAL of its own to roll a base on.
    const held = await api("POST", `/projects/${q.id}/branches`, { branch: { name: "held" } });
    expect(held.status).toBe(201);
    await allSettled(q.id, held.body.operations);
    const heldAt = (await api("GET", `/projects/${q.id}/branches/${held.body.branch.id}`)).body.branch
      .parent_lsn;
    for (const v of [2, 3]) {
      await sql(q, `INSERT INTO t VALUES (${v})`);
      await stop();
    }
    await advance(2 * 3600);
    await sql(q, "INSERT INTO t VALUES (4)");
    await stop();
    await retain(q, 3000);
    // Replayed from main's base, which may not have moved past where "held" begins.
    const at = await branch(q, { name: "held-at", parent_id: held.body.branch.id, parent_lsn: heldAt });
    expect(values(await sql(q, "SELECT v FROM t ORDER BY v", at.endpoints[0].id))).toEqual([1]);
  });

  it("an LSN from before the window is refused with the range the history now holds", async () => {
    const refused = await api("POST", `/projects/${p.id}/branches`, { branch: { parent_lsn: earlyLsn } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/is outside branch .* history, which holds [0-9A-F]+\/[0-9A-F]+ to/);
  });
});

describe("a child whose compute stopped once", () => {
  it("becomes a root of its own and no longer holds its parent's WAL back", async () => {
    const q = await createProject("stopped-once", { history_retention_seconds: 3600 });
    const projectDir = path.join(dir, "db-data", "projects", q.id);
    const segments = (branchId: string) => {
      const id = fs.readFileSync(path.join(projectDir, "branches", branchId, "neon_history"), "utf8");
      return fs
        .readdirSync(path.join(projectDir, "history", id))
        .filter((name) => /^[0-9A-F]{24}\.gz$/.test(name))
        .sort();
    };
    await sql(q, "CREATE TABLE t (v int)");
    await sql(q, "INSERT INTO t VALUES (1)");
    const dev = await branch(q, { name: "dev" });
    await sql(q, "INSERT INTO t VALUES (11)", dev.endpoints[0].id);
    await suspend(q, dev.endpoints[0].id); // its one stop: one segment of its own archived
    for (const v of [2, 3]) {
      await suspend(q);
      await sql(q, `INSERT INTO t VALUES (${v})`);
    }
    await suspend(q);
    const before = segments(q.branchId);
    await advance(2 * 3600);
    await sql(q, "INSERT INTO t VALUES (4)");
    await suspend(q);
    await retain(q, 3000);
    const after = segments(q.branchId);
    expect(after[0]).toBe(before[before.length - 1]);
    expect(values(await sql(q, "SELECT v FROM t ORDER BY v", dev.endpoints[0].id))).toEqual([1, 11]);
    expect(values(await sql(q, "SELECT v FROM t ORDER BY v"))).toEqual([1, 2, 3, 4]);
  });
});

describe("a pruning beside the requests that replay a history", () => {
  it("a create at a point accepted before the retention shrinks is made as of that point", async () => {
    const q = await createProject("race", { history_retention_seconds: 7200 });
    const cycle = async (write: string) => {
      await suspend(q);
      await sql(q, write);
    };
    await sql(q, "CREATE TABLE t (v int)");
    await sql(q, "INSERT INTO t VALUES (1)");
    await cycle("SELECT 1");
    await cycle("SELECT 1");
    const tA = await advance(600);
    await sql(q, "INSERT INTO t VALUES (2)");
    for (let i = 0; i < 3; i++) await cycle("SELECT 1");
    await advance(3600);
    await sql(q, "INSERT INTO t VALUES (3)");
    await cycle("SELECT 1");
    await cycle("INSERT INTO t VALUES (4)");
    // Inside the 2 h window when accepted; the shrunk window's pruning runs before the create's copy.
    const res = await api("POST", `/projects/${q.id}/branches`, {
      branch: { name: "at-a", parent_timestamp: iso(tA - 30_000) },
      endpoints: [{ type: "read_write" }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await retain(q, 1800);
    for (const op of res.body.operations) expect((await settled(q.id, op.id)).status).toBe("finished");
    expect(values(await sql(q, "SELECT v FROM t ORDER BY v", res.body.endpoints[0].id))).toEqual([1]);
  });

  it("a history no branch reaches once the ones continuing it rolled forward goes", async () => {
    const q = await createProject("unreached", { history_retention_seconds: 3600 });
    const projectDir = path.join(dir, "db-data", "projects", q.id);
    await sql(q, "CREATE TABLE t (v int)");
    await sql(q, "INSERT INTO t VALUES (1)");
    const schemaOnly = await api("POST", `/projects/${q.id}/branches`, {
      branch: { name: "empty", init_source: "schema-only" },
    });
    expect(schemaOnly.status).toBe(201);
    await allSettled(q.id, schemaOnly.body.operations);
    // Main takes the schema-only state; "kept" holds (and continues the history of) main's old one.
    const restored = await api("POST", `/projects/${q.id}/branches/${q.branchId}/restore`, {
      source_branch_id: schemaOnly.body.branch.id,
      preserve_under_name: "kept",
    });
    expect(restored.status).toBe(200);
    await allSettled(q.id, restored.body.operations);
    const branches = (await api("GET", `/projects/${q.id}/branches`)).body.branches;
    const kept = branches.find((b: { name: string }) => b.name === "kept");
    const ep = await api("POST", `/projects/${q.id}/endpoints`, {
      endpoint: { branch_id: kept.id, type: "read_write" },
    });
    expect(ep.status).toBe(201);
    await allSettled(q.id, ep.body.operations);
    const keptEp = ep.body.endpoint.id;
    for (const v of [11, 12, 13, 14]) {
      await suspend(q, keptEp);
      await sql(q, `INSERT INTO t VALUES (${v})`, keptEp);
    }
    await advance(2 * 3600);
    await suspend(q, keptEp);
    await sql(q, "INSERT INTO t VALUES (15)", keptEp);
    await suspend(q, keptEp);
    const histories = () => fs.readdirSync(path.join(projectDir, "history")).sort();
    const named = () =>
      fs
        .readdirSync(path.join(projectDir, "branches"))
        .map((b) => fs.readFileSync(path.join(projectDir, "branches", b, "neon_history"), "utf8"))
        .sort();
    expect(histories().length).toBeGreaterThan(named().length); // main's old history, continued by kept's
    await retain(q, 3000);
    expect(values(await sql(q, "SELECT v FROM t ORDER BY v", keptEp))).toEqual([1, 11, 12, 13, 14, 15]);
    // Kept's history became a root: main's old one is reached by no branch and went.
    expect(histories()).toEqual(named());
  });
});

describe("instant restore and snapshot storage in consumption history", () => {
  const HOUR = 3_600_000;
  const projectDir = (projectId: string) => path.join(dir, "db-data", "projects", projectId);
  /** The history a branch's folder writes to. */
  const ownHistory = (projectId: string, branchId: string) =>
    fs.readFileSync(path.join(projectDir(projectId), "branches", branchId, "neon_history"), "utf8");
  /** The bytes of the archived WAL segments of the named histories (all: every one), read off the folders. */
  const walBytes = (projectId: string, ids?: string[]) => {
    const historyDir = path.join(projectDir(projectId), "history");
    let sum = 0;
    for (const id of ids ?? fs.readdirSync(historyDir))
      for (const name of fs.readdirSync(path.join(historyDir, id)))
        if (/^[0-9A-F]{24}\.gz$/.test(name)) sum += fs.statSync(path.join(historyDir, id, name)).size;
    return sum;
  };
  const branchWal = (projectId: string, branchId: string) =>
    walBytes(projectId, [ownHistory(projectId, branchId)]);
  const monthOf = (ms: number) => {
    const d = new Date(ms);
    return (
      Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
    );
  };
  /** Byte-months of each [bytes, ms] held, in the month of `at`. */
  const byteMonths = (at: number, ...held: [number, number][]) =>
    Math.round(held.reduce((sum, [bytes, ms]) => sum + bytes * ms, 0) / monthOf(at));
  /** Moves the clock to a minute past the next whole hour; returns that hour. */
  const nextHour = async () => {
    const now = await advance(1);
    const hour = Math.ceil(now / HOUR) * HOUR;
    await advance((hour + 60_000 - now) / 1000);
    return hour;
  };
  /** Moves the clock to `at`; returns it. */
  const advanceTo = async (at: number) => advance((at - (await advance(1))) / 1000);
  const z = (ms: number) => iso(ms).replace(".000Z", "Z");
  type Frames = { consumption: { metrics: { value: number }[] }[] }[];
  /** Hourly v2 consumption from `from`, each timeframe's values in the order `metrics` names them. */
  async function consumption(
    of: "projects" | "branches",
    projectId: string,
    from: number,
    hours: number,
    metrics: string,
  ): Promise<Record<string, number[][]>> {
    const orgId = (await api("GET", "/users/me/organizations")).body.organizations[0].id;
    const res = await api(
      "GET",
      `/consumption_history/v2/${of}?from=${z(from)}&to=${z(from + hours * HOUR)}&granularity=hourly&org_id=${orgId}&project_ids=${projectId}&metrics=${metrics}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return Object.fromEntries(
      res.body[of].map((row: { project_id: string; branch_id?: string; periods: Frames }) => [
        row.branch_id ?? row.project_id,
        row.periods.flatMap((period) => period.consumption.map((f) => f.metrics.map((m) => m.value))),
      ]),
    );
  }

  it("bills the WAL a root branch's history holds, hour by hour, and each snapshot while it is kept", async () => {
    const h0 = await nextHour();
    const [h1, h2, h3] = [h0 + HOUR, h0 + 2 * HOUR, h0 + 3 * HOUR];
    const p = await createProject("metered", { history_retention_seconds: 3600 });
    await sql(p, "CREATE TABLE t (v int)");
    for (const v of [1, 2, 3]) {
      await sql(p, `INSERT INTO t VALUES (${v})`);
      await suspend(p);
    }
    const child = await branch(p, { name: "child" });
    await sql(p, "INSERT INTO t VALUES (10)", child.endpoints[0].id);
    await suspend(p, child.endpoints[0].id);
    const a = branchWal(p.id, p.branchId);
    expect(a).toBeGreaterThan(0);
    expect(branchWal(p.id, child.branch.id)).toBeGreaterThan(0); // a child's history is not billed
    const snapshot = async (name: string) => {
      const taken = await api("POST", `/projects/${p.id}/branches/${p.branchId}/snapshot?name=${name}`);
      expect(taken.status, JSON.stringify(taken.body)).toBe(200);
      expect(taken.body.snapshot.full_size).toBeGreaterThan(1_000_000);
      return taken.body.snapshot as { id: string; full_size: number; created_at: string };
    };
    const kept = await snapshot("kept");
    const keptAt = Date.parse(kept.created_at);
    expect(keptAt).toBeLessThan(h1);
    // A second one is given an expiry after it was taken: it counts until then.
    const brief = await snapshot("brief");
    const briefAt = Date.parse(brief.created_at);
    const expiresAt = h1 + 30 * 60_000;
    const patched = await api("PATCH", `/projects/${p.id}/snapshots/${brief.id}`, {
      snapshot: { expires_at: z(expiresAt) },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const k = kept.full_size;
    const s = brief.full_size;

    const atH2 = await advanceTo(h2 + 60_000);
    const METRICS = "instant_restore_bytes_month,snapshot_storage_bytes_month";
    expect((await consumption("projects", p.id, h0, 3, METRICS))[p.id]).toEqual([
      [byteMonths(h0, [a, HOUR]), byteMonths(h0, [k, h1 - keptAt], [s, h1 - briefAt])],
      [byteMonths(h0, [a, HOUR]), byteMonths(h0, [k, HOUR], [s, expiresAt - h1])],
      [byteMonths(h0, [a, atH2 - h2]), byteMonths(h0, [k, atH2 - h2])],
    ]);
    // A window after the last measure: the measure before it holds.
    expect((await consumption("projects", p.id, h1, 2, METRICS))[p.id]?.[0]).toEqual([
      byteMonths(h0, [a, HOUR]),
      byteMonths(h0, [k, HOUR], [s, expiresAt - h1]),
    ]);
    // Per branch: main's history, none for the child.
    expect(await consumption("branches", p.id, h0, 1, "instant_restore_bytes_month")).toEqual({
      [p.branchId]: [[byteMonths(h0, [a, HOUR])]],
      [child.branch.id]: [[0]],
    });

    // The snapshot goes; main writes more, then the retention prunes what is out of its window.
    expect((await api("DELETE", `/projects/${p.id}/snapshots/${kept.id}`)).status).toBe(202);
    const deletedAt = (await advance(1)) - 1000; // the clock at the deletion
    await sql(p, "INSERT INTO t VALUES (4)");
    await suspend(p);
    expect(branchWal(p.id, p.branchId)).toBeGreaterThan(a);
    await retain(p, 3000);
    const b = branchWal(p.id, p.branchId);
    expect(b).toBeLessThan(a); // the segments before the window went
    const atH3 = await advanceTo(h3 + 60_000);
    expect((await consumption("projects", p.id, h0, 4, METRICS))[p.id]).toEqual([
      [byteMonths(h0, [a, HOUR]), byteMonths(h0, [k, h1 - keptAt], [s, h1 - briefAt])],
      [byteMonths(h0, [a, HOUR]), byteMonths(h0, [k, HOUR], [s, expiresAt - h1])],
      // An hour counts its last measure.
      [byteMonths(h0, [b, HOUR]), byteMonths(h0, [k, deletedAt - h2])],
      [byteMonths(h0, [b, atH3 - h3]), 0],
    ]);
    // The project's data_storage_bytes_hour: its branches' logical sizes since they were made, and the history.
    const branches: { logical_size: number; created_at: string }[] = (
      await api("GET", `/projects/${p.id}/branches`)
    ).body.branches;
    const sizes = branches.reduce((sum, br) => sum + br.logical_size * (atH3 - Date.parse(br.created_at)), 0);
    const project = (await api("GET", `/projects/${p.id}`)).body.project;
    expect(project.data_storage_bytes_hour).toBe(Math.round((sizes + a * 2 * HOUR + b * (atH3 - h2)) / HOUR));
    // v1's synthetic storage size: the branches' data and the history held at each timeframe's end.
    const data = branches.reduce((sum, br) => sum + br.logical_size, 0);
    const v1 = await api(
      "GET",
      `/consumption_history/projects?from=${z(h0)}&to=${z(h0 + 4 * HOUR)}&granularity=hourly&project_ids=${p.id}`,
    );
    expect(v1.status, JSON.stringify(v1.body)).toBe(200);
    expect(
      v1.body.projects[0].periods[0].consumption.map(
        (f: { synthetic_storage_size_bytes: number }) => f.synthetic_storage_size_bytes,
      ),
    ).toEqual([data + a, data + a, data + b, data + b]);
  });

  it("bills a schema-only branch's history as a root's, until the hour it is deleted in ends", async () => {
    const g0 = await nextHour();
    const p = await createProject("metered-roots", { history_retention_seconds: 3600 });
    await sql(p, "CREATE TABLE s (v int)");
    const root = await branch(p, { name: "schema", init_source: "schema-only" });
    expect(root.branch.parent_id).toBeUndefined();
    const rootEp = root.endpoints[0].id;
    await sql(p, "INSERT INTO s VALUES (1)", rootEp);
    await suspend(p, rootEp);
    await suspend(p);
    const m = branchWal(p.id, p.branchId);
    const r = branchWal(p.id, root.branch.id);
    expect(r).toBeGreaterThan(0);
    await advanceTo(g0 + HOUR + 60_000);
    expect((await api("DELETE", `/projects/${p.id}/branches/${root.branch.id}`)).status).toBe(200);
    await advance(2 * 3600);
    expect((await consumption("projects", p.id, g0, 3, "instant_restore_bytes_month"))[p.id]).toEqual([
      [byteMonths(g0, [m + r, HOUR])],
      [byteMonths(g0, [m + r, HOUR])],
      [byteMonths(g0, [m, HOUR])],
    ]);
  });

  it("bills a root restored from its own past to the branch that keeps that past", async () => {
    const g0 = await nextHour();
    const p = await createProject("metered-restore", { history_retention_seconds: 86_400 });
    await sql(p, "CREATE TABLE r (v int)");
    for (const v of [1, 2]) {
      await sql(p, `INSERT INTO r VALUES (${v})`);
      await suspend(p);
    }
    const before = branchWal(p.id, p.branchId);
    const then = await advance(60);
    await sql(p, "INSERT INTO r VALUES (3)");
    await suspend(p);
    await advance(60);
    const restored = await api("POST", `/projects/${p.id}/branches/${p.branchId}/restore`, {
      source_branch_id: p.branchId,
      source_timestamp: z(then - 1000), // writes at `then` are after it
      preserve_under_name: "old",
    });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    await allSettled(p.id, restored.body.operations);
    expect(values(await sql(p, "SELECT v FROM r ORDER BY v"))).toEqual([1, 2]);
    const old = (await api("GET", `/projects/${p.id}/branches`)).body.branches.find(
      (b: { name: string }) => b.name === "old",
    );
    expect(old.parent_id).toBeUndefined(); // the kept state is the root now; main its child
    // The restored branch's past (its old history, and its kept state's own) is the kept state's.
    const past = walBytes(p.id) - branchWal(p.id, p.branchId);
    expect(past).toBeGreaterThan(before);
    // The hour of the restore counts its last measure, and the next the same.
    await advanceTo(g0 + 2 * HOUR + 60_000);
    expect(await consumption("branches", p.id, g0, 2, "instant_restore_bytes_month")).toEqual({
      [p.branchId]: [[0], [0]],
      [old.id]: [[byteMonths(g0, [past, HOUR])], [byteMonths(g0, [past, HOUR])]],
    });
  });
});
