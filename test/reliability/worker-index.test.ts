import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

/**
 * Regression (found while fuzzing the clock advance): every worker step looked for unfinished
 * operations with `status = ?`, which SQLite cannot serve from the partial index
 * operations_pending_idx (WHERE status IN ('scheduling', 'running')), so each step scanned
 * every operation ever made. A long-lived sandbox grows an operation per branch per hour; one
 * year-long advance of a single project took about three minutes and kept the server busy.
 */

let t: TestApp;
afterEach(() => t?.close());

interface PlanRow {
  detail: string;
}

/** The SQL statements prepared while `work` runs. */
function statementsDuring(sqlite: Database.Database, work: () => void): string[] {
  const statements = new Set<string>();
  const prepare = sqlite.prepare;
  sqlite.prepare = function (this: typeof sqlite, source: string) {
    statements.add(source);
    return prepare.call(this, source);
  } as typeof sqlite.prepare;
  try {
    work();
  } finally {
    sqlite.prepare = prepare;
  }
  return [...statements];
}

/** SQLite's query plan for a statement, its steps joined with " | " (parameters bound to null). */
function planOf(sqlite: Database.Database, s: string): string {
  const positional = Array((s.match(/\?/g) ?? []).length).fill(null);
  const named = Object.fromEntries([...s.matchAll(/@(\w+)/g)].map((m) => [m[1], null]));
  const stmt = sqlite.prepare(`EXPLAIN QUERY PLAN ${s}`);
  const plan = (Object.keys(named).length ? stmt.all(named) : stmt.all(...positional)) as PlanRow[];
  return plan.map((r) => r.detail).join(" | ");
}

describe("worker queries on a large operations table", () => {
  it("read unfinished operations and due endpoints through partial indexes, never by scanning them all", async () => {
    t = createTestApp();
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(p, 201);
    const sqlite = (t.ctx.db as unknown as { $client: Database.Database }).$client;
    // History: 20,000 finished operations, as a sandbox accumulates over months.
    const insert = sqlite.prepare(
      `INSERT INTO operations (id, account_id, project_id, branch_id, action, status, created_us, updated_at)
       VALUES (?, ?, ?, ?, 'check_availability', 'finished', ?, ?)`,
    );
    sqlite.transaction(() => {
      for (let i = 0; i < 20_000; i++)
        insert.run(
          `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
          t.accountId,
          p.body.project.id,
          p.body.branch.id,
          i + 1,
          0,
        );
    })();

    const statements = statementsDuring(sqlite, () => t.advance(3 * 3600));

    const reads = statements.filter(
      (s) => /^\s*select/i.test(s) && /from\s+"?(operations|endpoints)\b/i.test(s),
    );
    expect(reads.length).toBeGreaterThan(2);
    const scans = reads
      .map((s) => ({ s, plan: planOf(sqlite, s) }))
      .filter((x) => /\bSCAN (operations|endpoints)\b/.test(x.plan));
    expect(scans.map((x) => `${x.plan}\n  ${x.s}`)).toEqual([]);

    // The advance did its work: the project's endpoint started and checks ran.
    const ops = await t.api("GET", `/api/v2/projects/${p.body.project.id}/operations?limit=5`);
    expect(ops.body.operations.some((o: { action: string }) => o.action === "check_availability")).toBe(true);
  });
});

describe("worker queries with another account's armed faults", () => {
  it("find an operation's fault through the account's index, not by scanning every account's faults", async () => {
    t = createTestApp();
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(p, 201);
    const sqlite = (t.ctx.db as unknown as { $client: Database.Database }).$client;
    // Account B arms 20,000 faults (found by an attack review to slow A's advance 43×).
    const insert = sqlite.prepare(
      `INSERT INTO faults (account_id, action, remaining, message, created_at) VALUES ('acct-b', 'start_compute', 1, 'b', 0)`,
    );
    sqlite.transaction(() => {
      for (let i = 0; i < 20_000; i++) insert.run();
    })();
    const statements = statementsDuring(sqlite, () => t.advance(3600));
    // The reads that look for a matching fault (the "is any armed" probe stops at the first row).
    const lookups = statements.filter((s) => /^\s*select/i.test(s) && /from\s+"?faults"?\s+where/i.test(s));
    expect(lookups.length).toBeGreaterThan(0);
    for (const s of lookups) expect(planOf(sqlite, s), s).toContain("USING INDEX faults_account_action_idx");
    // A's operations finished untouched by B's faults.
    const ops = await t.api("GET", `/api/v2/projects/${p.body.project.id}/operations`);
    expect(ops.body.operations.filter((o: { status: string }) => o.status === "failed")).toEqual([]);
  });
});

describe("availability checks with another account's many branches", () => {
  it("find due branches through the check index, never by scanning every branch", async () => {
    t = createTestApp();
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(p, 201);
    const sqlite = (t.ctx.db as unknown as { $client: Database.Database }).$client;
    // 10,000 branches of account B without endpoints (found to make A's advance 12× slower); the
    // table's size is what matters, so they share A's project row.
    const insert = sqlite.prepare(
      `INSERT INTO branches (id, account_id, project_id, name, current_state, state_changed_at, creation_source, created_at, updated_at)
       VALUES (?, 'acct-b', ?, ?, 'ready', 0, 'console', 0, 0)`,
    );
    sqlite.transaction(() => {
      for (let i = 0; i < 10_000; i++) insert.run(`br-b-${i}`, p.body.project.id, `b-${i}`);
    })();
    const statements = statementsDuring(sqlite, () => t.advance(3 * 3600));
    const reads = statements.filter((s) => /^\s*select/i.test(s) && /from\s+"?branches\b/i.test(s));
    expect(reads.length).toBeGreaterThan(0);
    const scans = reads.map((s) => ({ s, plan: planOf(sqlite, s) })).filter((x) => /\bSCAN\b/.test(x.plan));
    expect(scans.map((x) => `${x.plan}\n  ${x.s}`)).toEqual([]);
    const ops = await t.api("GET", `/api/v2/projects/${p.body.project.id}/operations?limit=50`);
    const checks = ops.body.operations.filter((o: { action: string }) => o.action === "check_availability");
    expect(checks).toHaveLength(3);
  });

  it("follow the branch's endpoints: none when it has none, again once one is added or moved to it", async () => {
    t = createTestApp();
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(p, 201);
    const projectId = p.body.project.id;
    const mainId = p.body.branch.id;
    const checksOf = async (branchId: string) =>
      (await t.api("GET", `/api/v2/projects/${projectId}/operations?limit=200`)).body.operations.filter(
        (o: { action: string; branch_id: string }) =>
          o.action === "check_availability" && o.branch_id === branchId,
      ).length;
    const dev = await t.api("POST", `/api/v2/projects/${projectId}/branches`, { branch: { name: "dev" } });
    expectStatus(dev, 201);
    const devId = dev.body.branch.id;
    t.advance(2 * 3600);
    expect(await checksOf(devId)).toBe(0);
    expect(await checksOf(mainId)).toBe(2);

    expectStatus(
      await t.api("DELETE", `/api/v2/projects/${projectId}/endpoints/${p.body.endpoints[0].id}`),
      200,
    );
    t.advance(2 * 3600);
    expect(await checksOf(mainId)).toBe(2);

    const ep = await t.api("POST", `/api/v2/projects/${projectId}/endpoints`, {
      endpoint: { branch_id: devId, type: "read_write" },
    });
    expectStatus(ep, 201);
    t.advance(2 * 3600);
    // Its first grid point (01:00) long passed: checked at once (04:00), then at 05:00 and 06:00.
    expect(await checksOf(devId)).toBe(3);
    expect(await checksOf(mainId)).toBe(2);
  });
});
