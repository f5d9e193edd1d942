import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CreatedProject, manualClockClient, startComputeServer } from "../helpers/compute.js";
import { type RunningServer, randomKey } from "../helpers/server.js";

/**
 * Branch history on real computes: branches made at a point of their parent's past (parent_lsn,
 * parent_timestamp) and restores to a point (source_lsn, source_timestamp, a branch's own history
 * included) replay the WAL the computes archived. On the manual clock, so the times a test names
 * fall between its writes by construction. One server (and its computes) for the file.
 */
let server: RunningServer;
let dir: string;
const key = randomKey();

beforeAll(async () => {
  ({ server, dir } = await startComputeServer(key, {
    NEON_EMULATOR_CLOCK: "manual",
    NEON_EMULATOR_CLOCK_START: "2026-05-04T09:00:00Z",
  }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const { api, settled, advance, allSettled, createProject, sql, branch, query, clientOf } = manualClockClient(
  () => server,
  key,
);

type Project = CreatedProject;

const iso = (ms: number) => new Date(ms).toISOString();
const values = (rows: Record<string, unknown>[]) => rows.map((r) => r.v);

describe("a branch at a point of its parent's history", () => {
  let p: Project;
  let t0 = 0;

  it("parent_timestamp: the branch holds what was committed by then, and diverges from there", async () => {
    p = await createProject("history");
    await sql(p, "CREATE TABLE t (v int)");
    await sql(p, "INSERT INTO t VALUES (1)");
    t0 = await advance(60);
    await sql(p, "INSERT INTO t VALUES (2)");
    await advance(60);

    const body = await branch(p, { name: "at-t0", parent_timestamp: iso(t0 - 30_000) });
    expect(body.branch.parent_timestamp).toBe(iso(t0 - 30_000).replace(".000Z", "Z"));
    const child = body.endpoints[0].id;
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", child))).toEqual([1]);
    // The parent keeps its rows; the child writes on its own.
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v"))).toEqual([1, 2]);
    await sql(p, "INSERT INTO t VALUES (10)", child);
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", child))).toEqual([1, 10]);
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v"))).toEqual([1, 2]);
    const got = await api("GET", `/projects/${p.id}/branches/${body.branch.id}`);
    expect(got.body.branch.parent_lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
  });

  it("a time after the parent's last commit is its state then: every row", async () => {
    const body = await branch(p, { name: "quiet", parent_timestamp: iso(t0 + 30_000) });
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", body.endpoints[0].id))).toEqual([1, 2]);
  });

  it("parent_lsn: the branch holds what was written up to that LSN, and shows when its last transaction committed", async () => {
    const committed = await advance(1);
    await sql(p, "INSERT INTO t VALUES (3)");
    const [at] = await sql(p, "SELECT pg_current_wal_lsn()::text AS lsn");
    await advance(60);
    await sql(p, "INSERT INTO t VALUES (4)");
    const body = await branch(p, { name: "at-lsn", parent_lsn: String(at?.lsn) });
    expect(body.branch.parent_lsn).toBe(at?.lsn);
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", body.endpoints[0].id))).toEqual([1, 2, 3]);
    // Its parent_timestamp is the time of the LSN (the commit of row 3, on the account's clock), not its creation's.
    const got = await api("GET", `/projects/${p.id}/branches/${body.branch.id}`);
    expect(got.body.branch.parent_timestamp).toBe(iso(committed).replace(".000Z", "Z"));
    // An LSN written with leading zeros is shown as Postgres prints it.
    const padded = String(at?.lsn).replace(/^([0-9A-F]+)\//, (_, hi: string) => `${hi.padStart(8, "0")}/`);
    const again = await branch(p, { name: "at-lsn-padded", parent_lsn: padded });
    expect(again.branch.parent_lsn).toBe(at?.lsn);
    expect((await api("DELETE", `/projects/${p.id}/branches/${again.branch.id}`)).status).toBe(200);
    expect(Date.parse(got.body.branch.created_at)).toBeGreaterThanOrEqual(committed + 60_000);
  });

  it("a time just before a DROP DATABASE: the branch has the database, valid and whole, and its parent_lsn gives the same", async () => {
    const q = await createProject("before-drop");
    await sql(q, "CREATE DATABASE precious");
    await query(
      q.endpointId,
      q.role,
      q.password,
      "precious",
      "CREATE TABLE kept AS SELECT generate_series(1, 1000) AS g",
    );
    // A stop ends its WAL segment early (a switch, which the replay steps over to the next one).
    for (const verb of ["suspend", "start"]) {
      const changed = await api("POST", `/projects/${q.id}/endpoints/${q.endpointId}/${verb}`);
      await allSettled(q.id, changed.body.operations);
    }
    const before = await advance(60);
    // A DROP DATABASE marks the database invalid and removes its files before its commit: a replay
    // that stopped only at that commit would give them back that way.
    await sql(q, "DROP DATABASE precious");
    await advance(60);
    const count = "SELECT count(*)::int AS n FROM kept";
    const body = await branch(q, { name: "before-drop", parent_timestamp: iso(before - 30_000) });
    expect(await query(body.endpoints[0].id, q.role, q.password, "precious", count)).toEqual([{ n: 1000 }]);
    // What SQL made is taken into the API once a session ends.
    for (let i = 0; i < 100; i++) {
      const listed = await api("GET", `/projects/${q.id}/branches/${body.branch.id}/databases`);
      if (listed.body.databases.some((d: { name: string }) => d.name === "precious")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const listed = await api("GET", `/projects/${q.id}/branches/${body.branch.id}/databases`);
    expect(listed.body.databases.map((d: { name: string }) => d.name)).toContain("precious");
    const made = await api("GET", `/projects/${q.id}/branches/${body.branch.id}`);
    const same = await branch(q, { name: "same-lsn", parent_lsn: made.body.branch.parent_lsn });
    expect(await query(same.endpoints[0].id, q.role, q.password, "precious", count)).toEqual([{ n: 1000 }]);
  });

  it("a child made at a time, then branched at a time: its own commits, not its parent's later ones in the same WAL segment", async () => {
    const q = await createProject("timelines");
    await sql(q, "CREATE TABLE t (v int)");
    await sql(q, "INSERT INTO t VALUES (1)");
    const t1 = await advance(60);
    await sql(q, "INSERT INTO t VALUES (2)");
    // The child starts a timeline of its own where its parent's WAL was at t1.
    const child = await branch(q, { name: "from-t1", parent_timestamp: iso(t1 - 30_000) });
    const c: Project = { ...q, branchId: child.branch.id, endpointId: child.endpoints[0].id };
    await sql(c, "INSERT INTO t VALUES (10)");
    const t2 = await advance(60);
    // The parent commits on in the segment where the child's timeline began.
    await sql(q, "INSERT INTO t VALUES (3)");
    await advance(60);
    const body = await branch(q, {
      name: "child-at-t2",
      parent_id: c.branchId,
      parent_timestamp: iso(t2 - 30_000),
    });
    expect(values(await sql(q, "SELECT v FROM t ORDER BY v", body.endpoints[0].id))).toEqual([1, 10]);
  });

  it("a branch of a running parent written to meanwhile: its parent_lsn is where its data is, so a branch at it holds the same", async () => {
    const q = await createProject("busy-parent");
    await sql(q, "CREATE TABLE w (v int)");
    const writer = clientOf(q.endpointId, q.role, q.password, "neondb");
    await writer.connect();
    let writing = true;
    let written = 0;
    const writes = (async () => {
      while (writing) await writer.query("INSERT INTO w VALUES ($1)", [++written]);
    })();
    const copy = await branch(q, { name: "while-writing" }).finally(() => {
      writing = false;
    });
    await writes;
    await writer.end();
    const made = await api("GET", `/projects/${q.id}/branches/${copy.branch.id}`);
    const again = await branch(q, { name: "at-its-lsn", parent_lsn: made.body.branch.parent_lsn });
    const count = "SELECT count(*)::int AS n FROM w";
    const held = await sql(q, count, copy.endpoints[0].id);
    expect((held[0] as { n: number }).n).toBeGreaterThan(0);
    expect((held[0] as { n: number }).n).toBeLessThan(written);
    expect(await sql(q, count, again.endpoints[0].id)).toEqual(held);
  });

  it("reads the history of a suspended parent, and of a parent that is itself a child", async () => {
    const mid = await branch(p, { name: "mid" });
    const m: Project = { ...p, branchId: mid.branch.id, endpointId: mid.endpoints[0].id };
    await sql(m, "INSERT INTO t VALUES (100)");
    const t1 = await advance(60);
    await sql(m, "INSERT INTO t VALUES (200)");
    await advance(60);
    const suspended = await api("POST", `/projects/${p.id}/endpoints/${m.endpointId}/suspend`);
    expect(suspended.status).toBe(200);
    await allSettled(p.id, suspended.body.operations);

    const body = await branch(p, {
      name: "grandchild",
      parent_id: m.branchId,
      parent_timestamp: iso(t1 - 1000),
    });
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", body.endpoints[0].id))).toEqual([
      1, 2, 3, 4, 100,
    ]);
  });

  it("answers 400 for a point the history cannot give", async () => {
    const create = (b: Record<string, unknown>) => api("POST", `/projects/${p.id}/branches`, { branch: b });
    const both = await create({ parent_lsn: "0/1", parent_timestamp: iso(t0) });
    expect(both.status).toBe(400);
    expect(both.body.message).toContain("cannot be specified at the same time");
    const bad = await create({ parent_lsn: "yesterday" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("parent_lsn must be an LSN");
    const future = await create({ parent_timestamp: "2099-01-01T00:00:00Z" });
    expect(future.status).toBe(400);
    expect(future.body.message).toContain("is in the future");
    const early = await create({ parent_timestamp: "2026-05-04T08:00:00Z" });
    expect(early.status).toBe(400);
    expect(early.body.message).toContain("history begins");
    const ahead = await create({ parent_lsn: "FF/0" });
    expect(ahead.status).toBe(400);
    expect(ahead.body.message).toMatch(
      /parent_lsn FF\/0 is outside branch br-[a-z0-9-]+'s history, which holds 0\/[0-9A-F]+ to 0\/[0-9A-F]+/,
    );
    const before = await create({ parent_lsn: "0/1" });
    expect(before.status).toBe(400);
    expect(before.body.message).toContain("is outside branch");
    const branches = await api("GET", `/projects/${p.id}/branches`);
    expect(branches.body.branches.map((b: { name: string }) => b.name).sort()).toEqual(
      ["at-lsn", "at-t0", "grandchild", "main", "mid", "quiet"].sort(),
    );
  });

  it("a time older than the project's history_retention_seconds is refused", async () => {
    const short = await createProject("short-history", { history_retention_seconds: 3600 });
    const start = await advance(7200);
    const res = await api("POST", `/projects/${short.id}/branches`, {
      branch: { parent_timestamp: iso(start - 5400_000) },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("history_retention_seconds: 3600");
  });

  it("an LSN older than the project's history_retention_seconds is refused, as a time of that moment is, though its WAL is still kept", async () => {
    const short = await createProject("short-lsn", { history_retention_seconds: 3600 });
    await sql(short, "CREATE TABLE t (v int)");
    const [{ lsn: old }] = await sql(short, "SELECT pg_current_wal_lsn()::text AS lsn");
    // More WAL than a segment holds: the one holding that LSN is completed, and archived.
    await sql(short, "CREATE TABLE bulk AS SELECT g FROM generate_series(1, 400000) g");
    const [{ segment }] = await sql(short, `SELECT pg_walfile_name('${old}') AS segment`);
    for (let i = 0; i < 100; i++) {
      const [{ last }] = await sql(
        short,
        "SELECT coalesce(last_archived_wal, '') AS last FROM pg_stat_archiver",
      );
      if (last >= segment) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await advance(7200);
    const refused = await api("POST", `/projects/${short.id}/branches`, { branch: { parent_lsn: old } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(
      new RegExp(
        `parent_lsn ${old} is older than the project keeps history for \\(history_retention_seconds: 3600; the earliest LSN within it is [0-9A-F]+/[0-9A-F]+\\)`,
      ),
    );
    // A point written since is within it.
    await sql(short, "INSERT INTO t VALUES (1)");
    const [{ lsn: recent }] = await sql(short, "SELECT pg_current_wal_lsn()::text AS lsn");
    const made = await branch(short, { name: "recent", parent_lsn: recent });
    expect(values(await sql(short, "SELECT v FROM t", made.endpoints[0].id))).toEqual([1]);
  });
});

describe("a branch of its parent's head", () => {
  it("holds its parent as it was when the create answered, though its create_branch finishes only when the clock moves; its parent_lsn shows at once", async () => {
    const q = await createProject("head");
    await sql(q, "CREATE TABLE t (v int)");
    await sql(q, "INSERT INTO t VALUES (1)");
    const res = await api("POST", `/projects/${q.id}/branches`, {
      branch: { name: "head-copy" },
      endpoints: [{ type: "read_write" }],
    });
    expect(res.status).toBe(201);
    const lsn = res.body.branch.parent_lsn;
    expect(lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    // Written after the answer, the clock not moved: the branch's operation is still running.
    await sql(q, "INSERT INTO t VALUES (2)");
    const create = res.body.operations.find((o: { action: string }) => o.action === "create_branch");
    expect((await api("GET", `/projects/${q.id}/operations/${create.id}`)).body.operation.status).toBe(
      "running",
    );
    expect(
      (await api("GET", `/projects/${q.id}/branches/${res.body.branch.id}`)).body.branch.parent_lsn,
    ).toBe(lsn);
    await allSettled(q.id, res.body.operations);
    expect(values(await sql(q, "SELECT v FROM t ORDER BY v", res.body.endpoints[0].id))).toEqual([1]);
    expect(values(await sql(q, "SELECT v FROM t ORDER BY v"))).toEqual([1, 2]);
    expect(
      (await api("GET", `/projects/${q.id}/branches/${res.body.branch.id}`)).body.branch.parent_lsn,
    ).toBe(lsn);
  });
});

describe("restoring a branch to a point", () => {
  it("its own history: the state before a mistake comes back, the previous state is kept as its parent", async () => {
    const p = await createProject("undo");
    await sql(p, "CREATE TABLE precious (v int)");
    await sql(p, "INSERT INTO precious VALUES (1), (2)");
    const before = await advance(60);
    await sql(p, "DROP TABLE precious");
    await advance(60);

    const refused = await api("POST", `/projects/${p.id}/branches/${p.branchId}/restore`, {
      source_branch_id: p.branchId,
      source_timestamp: iso(before - 1000),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("preserve_under_name");

    const res = await api("POST", `/projects/${p.id}/branches/${p.branchId}/restore`, {
      source_branch_id: p.branchId,
      source_timestamp: iso(before - 1000),
      preserve_under_name: "main-before-restore",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await allSettled(p.id, res.body.operations);
    // The same endpoint, on the restored data.
    expect(values(await sql(p, "SELECT v FROM precious ORDER BY v"))).toEqual([1, 2]);
    const list = (await api("GET", `/projects/${p.id}/branches`)).body.branches as {
      id: string;
      name: string;
      parent_id?: string;
    }[];
    const kept = list.find((b) => b.name === "main-before-restore");
    const main = list.find((b) => b.id === p.branchId);
    expect(main?.parent_id).toBe(kept?.id);
    // The kept state of a root branch is a root: no parent, no parent_lsn.
    expect(kept?.parent_id).toBeUndefined();
    expect(kept).not.toHaveProperty("parent_lsn");
    // The kept branch holds the state the restore replaced.
    const keptBranch = await branch(p, { name: "look", parent_id: kept?.id });
    await expect(sql(p, "SELECT v FROM precious", keptBranch.endpoints[0].id)).rejects.toThrow(
      'relation "precious" does not exist',
    );
    // The kept branch's past is the branch's past before the restore.
    const keptThen = await branch(p, {
      name: "kept-then",
      parent_id: kept?.id,
      parent_timestamp: iso(before - 1000),
    });
    expect(values(await sql(p, "SELECT v FROM precious ORDER BY v", keptThen.endpoints[0].id))).toEqual([
      1, 2,
    ]);
    // The restored branch writes on, and its history goes on from the restore.
    await sql(p, "INSERT INTO precious VALUES (3)");
    const after = await advance(60);
    await sql(p, "INSERT INTO precious VALUES (4)");
    await advance(60);
    const again = await branch(p, { name: "after-restore", parent_timestamp: iso(after - 1000) });
    expect(values(await sql(p, "SELECT v FROM precious ORDER BY v", again.endpoints[0].id))).toEqual([
      1, 2, 3,
    ]);
  });

  it("another branch's history by LSN", async () => {
    const p = await createProject("restore-lsn");
    await sql(p, "CREATE TABLE t (v int)");
    await sql(p, "INSERT INTO t VALUES (1)");
    const [at] = await sql(p, "SELECT pg_current_wal_lsn()::text AS lsn");
    await sql(p, "INSERT INTO t VALUES (2)");
    const other = await branch(p, { name: "other", parent_lsn: String(at?.lsn) });
    expect(values(await sql(p, "SELECT v FROM t", other.endpoints[0].id))).toEqual([1]);
    await sql(p, "INSERT INTO t VALUES (3)");
    const res = await api("POST", `/projects/${p.id}/branches/${other.branch.id}/restore`, {
      source_branch_id: p.branchId,
      source_lsn: String(at?.lsn),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await allSettled(p.id, res.body.operations);
    expect(values(await sql(p, "SELECT v FROM t", other.endpoints[0].id))).toEqual([1]);
  });
});

describe("a branch's schema at a point", () => {
  it("schema and compare_schema read the branch as it was (what neon branches schema-diff …@time asks)", async () => {
    const p = await createProject("schema-then");
    await sql(p, "CREATE TABLE items (id int)");
    const then = await advance(60);
    await sql(p, "ALTER TABLE items ADD COLUMN added_later text");
    await advance(60);
    const b = `/projects/${p.id}/branches/${p.branchId}`;
    const past = await api("GET", `${b}/schema?db_name=neondb&timestamp=${iso(then - 1000)}`);
    expect(past.status, JSON.stringify(past.body)).toBe(200);
    expect(past.body.sql).toContain("CREATE TABLE public.items (\n    id integer\n);");
    const now = await api("GET", `${b}/schema?db_name=neondb`);
    expect(now.body.sql).toContain("added_later text");
    const diff = await api(
      "GET",
      `${b}/compare_schema?db_name=neondb&base_branch_id=${p.branchId}&base_timestamp=${iso(then - 1000)}`,
    );
    // A database made after the point was not there then.
    const made = await api("POST", `/projects/${p.id}/branches/${p.branchId}/databases`, {
      database: { name: "later", owner_name: p.role },
    });
    expect(made.status).toBe(201);
    await allSettled(p.id, made.body.operations);
    const missing = await api("GET", `${b}/schema?db_name=later&timestamp=${iso(then - 1000)}`);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toContain('database "later" did not exist');
    expect(diff.status).toBe(200);
    expect(diff.body.diff).toContain("+    added_later text");
    // Nothing is left of the copies read.
    const branchesDir = path.join(dir, "db-data", "projects", p.id, "branches");
    expect(fs.readdirSync(branchesDir)).toEqual([p.branchId]);
  });
});

describe("a snapshot at a point", () => {
  it("holds the branch as it was then, and a branch restored from it has those rows", async () => {
    const p = await createProject("snapshot-then");
    await sql(p, "CREATE TABLE t (v int)");
    await sql(p, "INSERT INTO t VALUES (1)");
    const then = await advance(60);
    await sql(p, "INSERT INTO t VALUES (2)");
    await advance(60);
    const taken = await api(
      "POST",
      `/projects/${p.id}/branches/${p.branchId}/snapshot?timestamp=${iso(then - 1000)}&name=then`,
    );
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    expect(taken.body.snapshot).toMatchObject({
      name: "then",
      timestamp: iso(then - 1000).replace(".000Z", "Z"),
      lsn: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/),
    });
    const restored = await api("POST", `/projects/${p.id}/snapshots/${taken.body.snapshot.id}/restore`, {
      name: "from-then",
    });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    // Its files are being copied for the restore: it is not deleted under it.
    const snapshotPath = `/projects/${p.id}/snapshots/${taken.body.snapshot.id}`;
    expect((await api("DELETE", snapshotPath)).status).toBe(423);
    await allSettled(p.id, restored.body.operations);
    const made = await api("POST", `/projects/${p.id}/endpoints`, {
      endpoint: { branch_id: restored.body.branch.id, type: "read_write" },
    });
    expect(made.status).toBe(201);
    await allSettled(p.id, made.body.operations);
    expect(values(await sql(p, "SELECT v FROM t", made.body.endpoint.id))).toEqual([1]);
    expect((await api("DELETE", snapshotPath)).status).toBe(202);
  });

  it("a snapshot still being taken (no data yet) is not restored", async () => {
    const p = await createProject("snapshot-under-way");
    await sql(p, "CREATE TABLE pad AS SELECT repeat('x', 1000) AS v FROM generate_series(1, 40000)");
    const taking = api("POST", `/projects/${p.id}/branches/${p.branchId}/snapshot?name=slow`);
    let refused: { status: number; body: { message: string } } | undefined;
    for (let i = 0; i < 400 && !refused; i++) {
      const listed = await api("GET", `/projects/${p.id}/snapshots`);
      const under = listed.body.snapshots.find(
        (s: { name: string; full_size?: number }) => s.name === "slow",
      );
      if (under && under.full_size === undefined)
        refused = await api("POST", `/projects/${p.id}/snapshots/${under.id}/restore`, { name: "too-soon" });
      else await new Promise((r) => setTimeout(r, 2));
    }
    expect(refused?.status).toBe(409);
    expect(refused?.body.message).toContain("holds no data");
    const taken = await taking;
    expect(taken.status).toBe(200);
    const restored = await api("POST", `/projects/${p.id}/snapshots/${taken.body.snapshot.id}/restore`, {
      name: "in-time",
    });
    expect(restored.status).toBe(200);
    await allSettled(p.id, restored.body.operations);
  });
});

describe("history on disk", () => {
  it("a branch whose data predates history answers 422 until its compute's next start begins one", async () => {
    const p = await createProject("predates");
    await sql(p, "CREATE TABLE t (v int)");
    const early = await advance(60);
    const suspended = await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/suspend`);
    await allSettled(p.id, suspended.body.operations);
    // As an emulator before branch history left it: no history named, none kept.
    const projectDir = path.join(dir, "db-data", "projects", p.id);
    fs.rmSync(path.join(projectDir, "branches", p.branchId, "neon_history"));
    fs.rmSync(path.join(projectDir, "history"), { recursive: true });
    await advance(60);
    const refused = await api("POST", `/projects/${p.id}/branches`, {
      branch: { parent_timestamp: iso(early) },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain("has no history to replay yet");
    await sql(p, "INSERT INTO t VALUES (1)"); // wakes it: its history starts
    await advance(60);
    const before = await api("POST", `/projects/${p.id}/branches`, {
      branch: { parent_timestamp: iso(early) },
    });
    expect(before.status).toBe(400);
    expect(before.body.message).toContain("history begins");
    expect(fs.readdirSync(path.join(projectDir, "history"))).toHaveLength(1);
  });

  it("a replay missing a segment of its history fails rather than stopping short", async () => {
    const p = await createProject("missing");
    await sql(p, "CREATE TABLE t (v int)");
    await sql(p, "INSERT INTO t VALUES (1)");
    const then = await advance(60);
    // Two stops: each archives its last segment.
    for (const verb of ["suspend", "start", "suspend"]) {
      const res = await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/${verb}`);
      await allSettled(p.id, res.body.operations);
    }
    const historyDir = path.join(dir, "db-data", "projects", p.id, "history");
    const [history] = fs.readdirSync(historyDir);
    const segments = fs
      .readdirSync(path.join(historyDir, String(history)))
      .filter((f) => f.endsWith(".gz"))
      .sort();
    expect(segments.length).toBeGreaterThan(0);
    fs.rmSync(path.join(historyDir, String(history), String(segments[0])));
    const res = await api("POST", `/projects/${p.id}/branches`, {
      branch: { parent_timestamp: iso(then - 1000) },
    });
    expect(res.status).toBe(201);
    await advance(1);
    const op = await settled(p.id, res.body.operations[0].id);
    expect(op).toMatchObject({ status: "failed" });
    expect(op.error).toContain(`missing WAL segment ${String(segments[0]).slice(0, 24)}`);
  });
  it("segments a segment switch ended lose their zeroed tail in the background, and a branch at a point replays them", async () => {
    const p = await createProject("trimmed");
    await sql(p, "CREATE TABLE t (v int)");
    await sql(p, "INSERT INTO t VALUES (1)");
    // Each stop archives its last segment, a switch's: mostly zeros.
    for (const verb of ["suspend", "start", "suspend", "start"]) {
      const res = await api("POST", `/projects/${p.id}/endpoints/${p.endpointId}/${verb}`);
      await allSettled(p.id, res.body.operations);
    }
    await sql(p, "INSERT INTO t VALUES (2)");
    const t = await advance(60);
    await sql(p, "INSERT INTO t VALUES (3)");
    await advance(60);
    const historyDir = path.join(dir, "db-data", "projects", p.id, "history");
    const [history] = fs.readdirSync(historyDir);
    // The size a gzip trailer gives: a whole segment's 16 MB until trimmed.
    const trimmed = () =>
      fs
        .readdirSync(path.join(historyDir, String(history)))
        .filter((f) => /^[0-9A-F]{24}\.gz$/.test(f))
        .map((f) => fs.readFileSync(path.join(historyDir, String(history), f)))
        .filter((gz) => gz.readUInt32LE(gz.length - 4) < 16 * 1024 * 1024).length;
    for (let i = 0; i < 300 && trimmed() < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(trimmed()).toBeGreaterThanOrEqual(2);
    const body = await branch(p, { name: "at-t", parent_timestamp: iso(t - 30_000) });
    expect(values(await sql(p, "SELECT v FROM t ORDER BY v", body.endpoints[0].id))).toEqual([1, 2]);
  });

  it("a deleted branch's history goes, unless a branch continues it", async () => {
    const p = await createProject("collect");
    const historyDir = path.join(dir, "db-data", "projects", p.id, "history");
    const count = () => fs.readdirSync(historyDir).length;
    expect(count()).toBe(1);
    const child = await branch(p, { name: "child" });
    expect(count()).toBe(2);
    const grandchild = await branch(p, { name: "grandchild", parent_id: child.branch.id });
    expect(count()).toBe(3);
    const del = await api("DELETE", `/projects/${p.id}/branches/${grandchild.branch.id}`);
    expect(del.status).toBe(200);
    for (let i = 0; i < 100 && count() > 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(count()).toBe(2);
  });
});
