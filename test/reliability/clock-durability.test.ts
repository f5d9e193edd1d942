import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client, must, type Proc, randomKey, readDb, sleep, spawnServer, tempDir } from "./support/server.js";

/**
 * Regression (found by the crash-consistency run): a SIGKILL in the middle of a manual clock
 * advance left operations and endpoints stamped later than the persisted clock, because the
 * new time was written only once the whole advance had finished. A restart then resumed from
 * the old time: the clock went backwards against the data.
 */

const START = Date.parse("2025-06-01T00:00:00Z");

function latestStamp(file: string): { clock: number; stamped: number } {
  return readDb(file, (db) => {
    // The latest persisted time of any account (each has its own; the base is the others').
    const clock = Number(
      (
        db
          .prepare(
            "SELECT max(CAST(value AS INTEGER)) AS value FROM emulator_state WHERE key LIKE 'clock.manual_ms%'",
          )
          .get() as { value: number }
      ).value,
    );
    const stamped = (
      db
        .prepare(
          `SELECT max(t) AS t FROM (SELECT max(updated_at) AS t FROM operations
             UNION ALL SELECT max(updated_at) FROM endpoints UNION ALL SELECT max(last_active) FROM endpoints
             UNION ALL SELECT max(updated_at) FROM branches UNION ALL SELECT max(last_check_at) FROM branches)`,
        )
        .get() as { t: number }
    ).t;
    return { clock, stamped };
  });
}

describe("manual clock durability", () => {
  const procs: Proc[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop("SIGKILL");
  });

  it("a SIGKILL in the middle of a long advance never leaves rows stamped later than the clock", async () => {
    const file = path.join(tempDir(), "clock.db");
    const key = randomKey();
    const env = {
      NEON_EMULATOR_DB: file,
      NEON_EMULATOR_API_KEY: key,
      NEON_EMULATOR_CLOCK: "manual",
      NEON_EMULATOR_CLOCK_START: new Date(START).toISOString(),
    };
    let server = await spawnServer(env);
    procs.push(server);
    let c = new Client(server.url, 8);
    for (let i = 0; i < 3; i++)
      must(await c.request("POST", "/api/v2/projects", { key, body: { project: {} } }), 201, "project");
    // A year of hourly availability checks: thousands of steps, each its own transaction.
    const advance = c.request("POST", "/_emulator/clock/advance", { key, body: { seconds: 366 * 86400 } });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && latestStamp(file).stamped < START + 2 * 86_400_000) await sleep(50);
    await server.stop("SIGKILL");
    const outcome = await advance;
    c.close();
    expect(outcome.status, "the advance must still have been running when the server was killed").toBe(0);

    const { clock, stamped } = latestStamp(file);
    expect(stamped).toBeGreaterThan(START + 2 * 86_400_000);
    expect(clock, "persisted clock vs the latest time any row was stamped with").toBeGreaterThanOrEqual(
      stamped,
    );

    server = await spawnServer(env);
    procs.push(server);
    c = new Client(server.url, 8);
    try {
      const now = Date.parse(must(await c.request("GET", "/_emulator/clock", { key }), 200).body.now);
      expect(now).toBeGreaterThanOrEqual(stamped);
      // And it carries on from there.
      must(await c.request("POST", "/_emulator/clock/advance", { key, body: { seconds: 10 } }), 200);
      const after = latestStamp(file);
      expect(after.clock).toBeGreaterThanOrEqual(after.stamped);
    } finally {
      c.close();
    }
  }, 180_000);

  it("each account's time survives a SIGKILL and a restart; an account that never advanced stays at the base", async () => {
    const file = path.join(tempDir(), "accounts.db");
    const key = randomKey();
    const env = {
      NEON_EMULATOR_DB: file,
      NEON_EMULATOR_API_KEY: key,
      NEON_EMULATOR_CLOCK: "manual",
      NEON_EMULATOR_CLOCK_START: new Date(START).toISOString(),
    };
    let server = await spawnServer(env);
    procs.push(server);
    let c = new Client(server.url, 4);
    const b = must(await c.request("POST", "/_emulator/accounts", { key, body: { name: "b" } }), 201).body.key
      .key;
    const cKey = must(await c.request("POST", "/_emulator/accounts", { key, body: { name: "c" } }), 201).body
      .key.key;
    must(await c.request("POST", "/_emulator/clock/advance", { key, body: { seconds: 86400 } }), 200);
    must(await c.request("POST", "/_emulator/clock/advance", { key: b, body: { seconds: 3600 } }), 200);
    c.close();
    await server.stop("SIGKILL");

    server = await spawnServer(env);
    procs.push(server);
    c = new Client(server.url, 4);
    try {
      const now = async (k: string) =>
        Date.parse(must(await c.request("GET", "/_emulator/clock", { key: k }), 200).body.now);
      expect(await now(key)).toBe(START + 86_400_000);
      expect(await now(b)).toBe(START + 3_600_000);
      expect(await now(cKey)).toBe(START);
    } finally {
      c.close();
    }
  }, 60_000);
});
