import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";
import {
  Client,
  must,
  type Proc,
  randomKey,
  readDb,
  SOAK,
  sleep,
  spawnServer,
  tempDir,
} from "./support/server.js";

/**
 * Regressions (attack review): a one-year advance over 100 endpoints held the server for 53 s
 * (health failed throughout), and every advance grew the operations table without bound (a
 * check per branch per hour, kept forever).
 */

describe("a long clock advance", () => {
  const procs: Proc[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop("SIGKILL");
  });

  it(
    "lets other requests through while it runs: health keeps answering",
    async () => {
      const key = randomKey();
      const file = path.join(tempDir(), "advance.db");
      const server = await spawnServer({
        NEON_EMULATOR_DB: file,
        NEON_EMULATOR_API_KEY: key,
        NEON_EMULATOR_CLOCK: "manual",
        NEON_EMULATOR_CLOCK_START: "2025-01-01T00:00:00Z",
        NEON_EMULATOR_COMPUTE: "none",
      });
      procs.push(server);
      const c = new Client(server.url, 8);
      const projects = SOAK ? 100 : 5;
      const days = SOAK ? 365 : 120;
      for (let i = 0; i < projects; i++)
        must(await c.request("POST", "/api/v2/projects", { key, body: { project: {} } }), 201, "project");

      let advanced = false;
      const began = performance.now();
      // The soak's year over 100 projects takes ~160 s on a slow 2-core machine: longer than the
      // client's default 120 s wait.
      const advance = c
        .request("POST", "/_emulator/clock/advance", {
          key,
          body: { seconds: days * 86400 },
          timeoutMs: 600_000,
        })
        .finally(() => {
          advanced = true;
        });
      const health: number[] = [];
      const during: number[] = [];
      while (!advanced) {
        const h = await c.request("GET", "/_emulator/health");
        expect(h.status).toBe(200);
        health.push(h.endedAt - h.startedAt);
        if (!advanced) during.push(h.endedAt - h.startedAt);
        await sleep(20);
      }
      const done = must(await advance, 200, "advance");
      const took = performance.now() - began;
      expect(done.body.now).toBe(
        new Date(Date.parse("2025-01-01T00:00:00Z") + days * 86_400_000).toISOString().replace(".000Z", "Z"),
      );
      // Before: the first health request was answered only once the advance had finished.
      expect(during.length).toBeGreaterThanOrEqual(3);
      const sorted = [...during].sort((a, b) => a - b);
      const at = (q: number) =>
        sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]?.toFixed(1);
      console.log(
        `long advance (${projects} projects, ${days} days) took ${(took / 1000).toFixed(1)} s: ${during.length} health answers during it, latency p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`,
      );
      // The advance did its work: every branch was checked up to the new time, and history older
      // than the retention is gone.
      const { checks, oldest } = readDb(file, (db) => ({
        checks: (
          db.prepare("SELECT count(*) AS n FROM operations WHERE action = 'check_availability'").get() as {
            n: number;
          }
        ).n,
        oldest: (db.prepare("SELECT min(created_us) AS us FROM operations").get() as { us: number }).us,
      }));
      expect(checks).toBeGreaterThan(projects * Math.min(days, 180) * 24 - projects * 48);
      expect(oldest / 1000).toBeGreaterThanOrEqual(Date.parse(done.body.now) - 180 * 86_400_000);
      c.close();
    },
    SOAK ? 900_000 : 120_000,
  );
});

describe("operation history", () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it("older than the retention (180 days by default) is removed as time passes; unfinished operations stay", async () => {
    t = createTestApp();
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(p, 201);
    const projectId = p.body.project.id;
    t.advance(400 * 86400);
    const sqlite = (t.ctx.db as unknown as { $client: import("better-sqlite3").Database }).$client;
    const count = () => (sqlite.prepare("SELECT count(*) AS n FROM operations").get() as { n: number }).n;
    const oldestUs = (sqlite.prepare("SELECT min(created_us) AS us FROM operations").get() as { us: number })
      .us;
    expect(oldestUs / 1000).toBeGreaterThanOrEqual(t.clock.now() - 180 * 86_400_000);
    // An hourly check for 180 days, not 400.
    expect(count()).toBeGreaterThan(180 * 24 - 2);
    expect(count()).toBeLessThanOrEqual(180 * 24 + 2);
    // The list still pages through what is kept, newest first.
    const page = await t.api("GET", `/api/v2/projects/${projectId}/operations?limit=2`);
    expectStatus(page, 200);
    expect(page.body.operations).toHaveLength(2);

    // An operation left unfinished (a fault of the worker) is never pruned, however old.
    const oldest = sqlite.prepare("SELECT id FROM operations ORDER BY created_us LIMIT 1").get() as {
      id: string;
    };
    sqlite
      .prepare("UPDATE operations SET status = 'running', due_at = @far WHERE id = @id")
      .run({ id: oldest.id, far: t.clock.now() + 1000 * 86_400_000 });
    t.advance(300 * 86400);
    expect(sqlite.prepare("SELECT status FROM operations WHERE id = ?").get(oldest.id)).toEqual({
      status: "running",
    });
  });

  it("NEON_EMULATOR_OPERATION_RETENTION_DAYS=0 keeps every operation", async () => {
    const keep = createTestApp({ config: { operationRetentionDays: 0 } });
    try {
      expectStatus(await keep.api("POST", "/api/v2/projects", { project: {} }), 201);
      keep.advance(200 * 86400);
      const sqlite = (keep.ctx.db as unknown as { $client: import("better-sqlite3").Database }).$client;
      const checks = (
        sqlite.prepare("SELECT count(*) AS n FROM operations WHERE action = 'check_availability'").get() as {
          n: number;
        }
      ).n;
      expect(checks).toBe(200 * 24);
    } finally {
      keep.close();
    }
  });
});
