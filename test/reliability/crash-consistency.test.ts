import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  Client,
  integrityCheck,
  must,
  type Proc,
  type Reply,
  randomKey,
  readDb,
  SOAK,
  sleep,
  spawnServer,
  tempDir,
} from "./support/server.js";

/**
 * A real server under concurrent writes is killed with SIGKILL at a random moment, then
 * restarted on the same file, CYCLES times. What the client saw acknowledged (2xx) must be
 * there, what it saw rejected (4xx) must not, the file must pass integrity_check, and the
 * operations in flight must resume and settle.
 */

const CYCLES = SOAK ? 20 : 3;
const WORKERS = 8;
const CLOCK_START = "2025-03-01T00:00:00Z";

interface Ledger {
  projects: Map<string, string>; // name -> id (acknowledged)
  branches: Map<string, { projectId: string; id: string }>; // name -> (acknowledged)
  endpoints: Map<string, { projectId: string; branchId: string; id: string }>;
  keys: Map<string, { id: number; key: string }>;
  revoked: Set<number>; // acknowledged revocations
  rejected: { projects: Set<string>; branches: Set<string>; endpoints: Set<string>; keys: Set<string> };
  /** Keys whose revocation had no answer: revoked or not, both are fine. */
  uncertain: Set<number>;
  foreign: { key: string; ids: number[] };
  counts: Record<string, number>;
}

function newLedger(): Ledger {
  return {
    projects: new Map(),
    branches: new Map(),
    endpoints: new Map(),
    keys: new Map(),
    revoked: new Set(),
    rejected: { projects: new Set(), branches: new Set(), endpoints: new Set(), keys: new Set() },
    uncertain: new Set(),
    foreign: { key: "", ids: [] },
    counts: {},
  };
}

const pick = <T>(items: T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

function tally(l: Ledger, what: string, r: Reply) {
  const k = `${what}:${r.status === 0 ? "lost" : r.status}`;
  l.counts[k] = (l.counts[k] ?? 0) + 1;
}

/** One worker: random writes until the server dies under it. */
async function writer(
  c: Client,
  key: string,
  l: Ledger,
  tag: string,
  alive: () => boolean,
): Promise<string[]> {
  const problems: string[] = [];
  let n = 0;
  const unexpected = (what: string, r: Reply) => {
    if (r.status >= 500 || (r.status !== 0 && r.body?.message === undefined && r.status >= 400))
      problems.push(`${what}: HTTP ${r.status} ${r.text}`);
  };
  while (alive()) {
    const name = `${tag}-${n++}`;
    const roll = Math.random();
    const projects = [...l.projects.values()];
    if (roll < 0.14) {
      const r = await c.request("POST", "/api/v2/projects", {
        key,
        body: { project: { name: `p-${name}`, default_endpoint_settings: { suspend_timeout_seconds: -1 } } },
      });
      tally(l, "project", r);
      if (r.status === 201) l.projects.set(`p-${name}`, r.body.project.id);
      else if (r.status !== 0) problems.push(`project create: HTTP ${r.status} ${r.text}`);
    } else if (roll < 0.18) {
      const r = await c.request("POST", "/api/v2/projects", {
        key,
        body: { project: { name: `rp-${name}`, pg_version: 99 } },
      });
      tally(l, "bad project", r);
      if (r.status === 400) l.rejected.projects.add(`rp-${name}`);
      else if (r.status !== 0) problems.push(`bad project create: HTTP ${r.status} ${r.text}`);
    } else if (roll < 0.38 && projects.length) {
      const projectId = pick(projects) as string;
      const r = await c.request("POST", `/api/v2/projects/${projectId}/branches`, {
        key,
        body: { branch: { name: `b-${name}` } },
      });
      tally(l, "branch", r);
      if (r.status === 201) l.branches.set(`b-${name}`, { projectId, id: r.body.branch.id });
      else if (r.status !== 0) problems.push(`branch create: HTTP ${r.status} ${r.text}`);
    } else if (roll < 0.42 && projects.length) {
      const projectId = pick(projects) as string;
      const r = await c.request("POST", `/api/v2/projects/${projectId}/branches`, {
        key,
        body: { branch: { name: `rb-${name}`, parent_id: "br-no-such-parent" } },
      });
      tally(l, "bad branch", r);
      if (r.status === 404) l.rejected.branches.add(`rb-${name}`);
      else if (r.status !== 0) problems.push(`bad branch create: HTTP ${r.status} ${r.text}`);
    } else if (roll < 0.62 && l.branches.size) {
      // Recent branches: several writers aim at the same few, so both 201s and 409s happen.
      const recent = [...l.branches.values()].slice(-6);
      const b = pick(recent) as { projectId: string; id: string };
      const r = await c.request("POST", `/api/v2/projects/${b.projectId}/endpoints`, {
        key,
        body: {
          endpoint: { branch_id: b.id, type: "read_write", name: `e-${name}`, suspend_timeout_seconds: -1 },
        },
      });
      tally(l, "endpoint", r);
      if (r.status === 201)
        l.endpoints.set(`e-${name}`, { projectId: b.projectId, branchId: b.id, id: r.body.endpoint.id });
      else if (r.status === 409) l.rejected.endpoints.add(`e-${name}`);
      else if (r.status !== 0) problems.push(`endpoint create: HTTP ${r.status} ${r.text}`);
    } else if (roll < 0.76) {
      const r = await c.request("POST", "/api/v2/api_keys", { key, body: { key_name: `k-${name}` } });
      tally(l, "key", r);
      if (r.status === 200) l.keys.set(`k-${name}`, { id: r.body.id, key: r.body.key });
      else if (r.status !== 0) problems.push(`key create: HTTP ${r.status} ${r.text}`);
    } else if (roll < 0.8) {
      const long = `rk-${name}-`.padEnd(65, "x");
      const r = await c.request("POST", "/api/v2/api_keys", { key, body: { key_name: long } });
      tally(l, "bad key", r);
      if (r.status === 400) l.rejected.keys.add(long);
      else if (r.status !== 0) problems.push(`bad key create: HTTP ${r.status} ${r.text}`);
    } else if (roll < 0.92) {
      const candidates = [...l.keys.values()].filter((k) => !l.revoked.has(k.id) && !l.uncertain.has(k.id));
      const k = pick(candidates);
      if (!k) continue;
      l.uncertain.add(k.id);
      const r = await c.request("DELETE", `/api/v2/api_keys/${k.id}`, { key });
      tally(l, "revoke", r);
      if (r.status === 200) {
        l.revoked.add(k.id);
        l.uncertain.delete(k.id);
      } else if (r.status !== 0) problems.push(`revoke: HTTP ${r.status} ${r.text}`);
    } else if (roll < 0.96) {
      // Another account's key: refused with 404, and it must stay valid.
      const r = await c.request("DELETE", `/api/v2/api_keys/${pick(l.foreign.ids)}`, { key });
      tally(l, "foreign revoke", r);
      if (r.status !== 404 && r.status !== 0) problems.push(`foreign revoke: HTTP ${r.status} ${r.text}`);
    } else {
      const r = await c.request("POST", "/_emulator/clock/advance", {
        key,
        body: { seconds: Math.round(Math.random() * 2000) / 1000 + 0.001 },
      });
      tally(l, "advance", r);
      unexpected("advance", r);
    }
  }
  return problems;
}

/** Everything the ledger says, checked against the raw tables of the stopped server's file. */
function checkFile(file: string, l: Ledger): void {
  expect(integrityCheck(file)).toBe("ok");
  readDb(file, (db) => {
    expect(db.pragma("foreign_key_check")).toEqual([]);
    const projectIds = new Map(
      (db.prepare("SELECT name, id FROM projects").all() as { name: string; id: string }[]).map((r) => [
        r.name,
        r.id,
      ]),
    );
    for (const [name, id] of l.projects)
      expect(projectIds.get(name), `acknowledged project ${name}`).toBe(id);
    for (const name of l.rejected.projects)
      expect(projectIds.has(name), `rejected project ${name}`).toBe(false);

    const branchIds = new Map(
      (db.prepare("SELECT name, id FROM branches").all() as { name: string; id: string }[]).map((r) => [
        r.name,
        r.id,
      ]),
    );
    for (const [name, b] of l.branches) expect(branchIds.get(name), `acknowledged branch ${name}`).toBe(b.id);
    for (const name of l.rejected.branches)
      expect(branchIds.has(name), `rejected branch ${name}`).toBe(false);

    const endpoints = new Map(
      (
        db.prepare("SELECT name, id, branch_id FROM endpoints WHERE name IS NOT NULL").all() as {
          name: string;
          id: string;
          branch_id: string;
        }[]
      ).map((r) => [r.name, r]),
    );
    for (const [name, e] of l.endpoints)
      expect(endpoints.get(name), `acknowledged endpoint ${name}`).toMatchObject({
        id: e.id,
        branch_id: e.branchId,
      });
    for (const name of l.rejected.endpoints)
      expect(endpoints.has(name), `rejected endpoint ${name}`).toBe(false);
    const twoWriters = db
      .prepare(
        "SELECT branch_id FROM endpoints WHERE type = 'read_write' GROUP BY branch_id HAVING count(*) > 1",
      )
      .all();
    expect(twoWriters).toEqual([]);

    const keys = new Map(
      (
        db.prepare("SELECT id, name, revoked_at FROM api_keys").all() as {
          id: number;
          name: string;
          revoked_at: number | null;
        }[]
      ).map((r) => [r.name, r]),
    );
    for (const [name, k] of l.keys) {
      const row = keys.get(name);
      expect(row?.id, `acknowledged key ${name}`).toBe(k.id);
      if (l.revoked.has(k.id)) expect(row?.revoked_at, `acknowledged revocation of ${name}`).not.toBeNull();
      else if (!l.uncertain.has(k.id)) expect(row?.revoked_at, `unrevoked key ${name}`).toBeNull();
    }
    for (const name of l.rejected.keys) expect(keys.has(name), `rejected key ${name}`).toBe(false);
    const foreignRevoked = db
      .prepare(
        `SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NOT NULL AND id IN (${l.foreign.ids.join(",")})`,
      )
      .get() as { n: number };
    expect(foreignRevoked.n, "another account's keys stay valid").toBe(0);

    // Each account's manual time is persisted no later than anything stamped with it: it never
    // goes backwards. (An account that never advanced stands at the base time.)
    const clocks = new Map(
      (
        db.prepare("SELECT key, value FROM emulator_state WHERE key LIKE 'clock.manual_ms%'").all() as {
          key: string;
          value: string;
        }[]
      ).map((r) => [r.key, Number(r.value)]),
    );
    const base = clocks.get("clock.manual_ms") ?? 0;
    const stamped = db
      .prepare(
        `SELECT account_id AS accountId, max(t) AS t FROM (
           SELECT account_id, max(updated_at) AS t FROM operations GROUP BY account_id
           UNION ALL SELECT account_id, max(updated_at) FROM endpoints GROUP BY account_id
           UNION ALL SELECT account_id, max(updated_at) FROM branches GROUP BY account_id
           UNION ALL SELECT account_id, max(updated_at) FROM projects GROUP BY account_id)
         GROUP BY account_id`,
      )
      .all() as { accountId: string; t: number | null }[];
    for (const { accountId, t } of stamped)
      expect(
        t ?? 0,
        `no row of ${accountId} is stamped later than its persisted manual clock`,
      ).toBeLessThanOrEqual(clocks.get(`clock.manual_ms.${accountId}`) ?? base);
  });
}

/** After a restart: acknowledged objects answer through the API, keys authenticate or not, and in-flight work settles. */
async function checkServer(c: Client, key: string, l: Ledger): Promise<void> {
  must(await c.request("POST", "/_emulator/clock/advance", { key, body: { seconds: 10 } }), 200, "advance");
  const seen = new Set<string>();
  for (let cursor: string | undefined; ; ) {
    const page = must(
      await c.request("GET", `/api/v2/projects?limit=400${cursor ? `&cursor=${cursor}` : ""}`, { key }),
      200,
      "list projects",
    );
    for (const p of page.body.projects as { id: string }[]) seen.add(p.id);
    cursor = page.body.pagination?.cursor;
    if (!cursor) break;
  }
  for (const [name, id] of l.projects)
    expect(seen.has(id), `project ${name} listed after restart`).toBe(true);

  const problems: string[] = [];
  await Promise.all(
    [...seen].map(async (pid) => {
      const [ops, eps, brs] = await Promise.all([
        c.request("GET", `/api/v2/projects/${pid}/operations?limit=1000`, { key }),
        c.request("GET", `/api/v2/projects/${pid}/endpoints`, { key }),
        c.request("GET", `/api/v2/projects/${pid}/branches`, { key }),
      ]);
      for (const r of [ops, eps, brs])
        if (r.status !== 200) problems.push(`${pid}: HTTP ${r.status} ${r.text}`);
      for (const o of ops.body.operations as { action: string; status: string; id: string }[])
        if (o.status === "scheduling" || o.status === "running")
          problems.push(`${pid}: operation ${o.action} ${o.id} still ${o.status} after restart + 10 s`);
      for (const e of eps.body.endpoints as { id: string; current_state: string; pending_state?: string }[])
        if (e.current_state !== "active" || e.pending_state !== undefined)
          problems.push(
            `${pid}: endpoint ${e.id} is ${e.current_state}/${e.pending_state} after restart + 10 s`,
          );
      for (const b of brs.body.branches as { id: string; current_state: string }[])
        if (b.current_state !== "ready") problems.push(`${pid}: branch ${b.id} is ${b.current_state}`);
    }),
  );
  expect(problems).toEqual([]);

  const auth = async (k: string) => (await c.request("GET", "/api/v2/auth", { key: k })).status;
  for (const [name, k] of l.keys) {
    if (l.uncertain.has(k.id)) continue;
    expect(await auth(k.key), `key ${name} (${l.revoked.has(k.id) ? "revoked" : "active"})`).toBe(
      l.revoked.has(k.id) ? 401 : 200,
    );
  }
  expect(await auth(l.foreign.key), "the other account's key").toBe(200);
}

describe("crash consistency under SIGKILL", () => {
  const procs: Proc[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop("SIGKILL");
  });

  it(
    `keeps every acknowledged write and no rejected one across ${CYCLES} SIGKILL/restart cycles`,
    async () => {
      const file = path.join(tempDir(), "crash.db");
      const key = randomKey();
      const env = {
        NEON_EMULATOR_DB: file,
        NEON_EMULATOR_API_KEY: key,
        NEON_EMULATOR_CLOCK: "manual",
        NEON_EMULATOR_CLOCK_START: CLOCK_START,
        // No periodic checks inside the short windows this test advances through.
        NEON_EMULATOR_CHECK_INTERVAL_SECONDS: String(30 * 86400),
        // The long run's writers make more projects than a plan holds: the limits are not what it tests.
        NEON_EMULATOR_LIMITS: "projects=1000000,branches=1000000,computes=1000000",
      };
      const l = newLedger();
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const server = await spawnServer(env);
        procs.push(server);
        const c = new Client(server.url, 32);
        try {
          if (cycle === 0) {
            const other = must(
              await c.request("POST", "/_emulator/accounts", { key, body: {} }),
              201,
              "account",
            );
            l.foreign.key = other.body.key.key;
            for (let i = 0; i < 3; i++) {
              const k = must(
                await c.request("POST", "/api/v2/api_keys", {
                  key: l.foreign.key,
                  body: { key_name: `f${i}` },
                }),
                200,
              );
              l.foreign.ids.push(k.body.id);
            }
          } else {
            await checkServer(c, key, l);
          }
          let alive = true;
          const writers = Array.from({ length: WORKERS }, (_, w) =>
            writer(c, key, l, `c${cycle}w${w}`, () => alive),
          );
          await sleep(150 + Math.random() * 1000);
          await server.stop("SIGKILL");
          alive = false;
          const problems = (await Promise.all(writers)).flat();
          expect(problems, `cycle ${cycle}`).toEqual([]);
        } finally {
          c.close();
        }
        checkFile(file, l);
      }
      // A last clean start: everything still there, and a clean stop leaves a sound file.
      const server = await spawnServer(env);
      procs.push(server);
      const c = new Client(server.url, 32);
      try {
        await checkServer(c, key, l);
      } finally {
        c.close();
      }
      await server.stop("SIGTERM");
      expect(server.proc.exitCode).toBe(0);
      checkFile(file, l);
      if (process.env.CRASH_STATS) console.log(JSON.stringify(l.counts));
      // The run must have exercised every kind of write, acknowledged and rejected.
      expect(l.projects.size).toBeGreaterThan(0);
      expect(l.branches.size).toBeGreaterThan(0);
      expect(l.endpoints.size).toBeGreaterThan(0);
      expect(l.keys.size).toBeGreaterThan(0);
      expect(l.rejected.projects.size + l.rejected.keys.size + l.rejected.endpoints.size).toBeGreaterThan(0);
    },
    SOAK ? 900_000 : 120_000,
  );
});
