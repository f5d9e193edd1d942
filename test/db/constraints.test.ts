import path from "node:path";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { endpoints } from "../../src/control-plane/endpoints/table.js";
import { openStorage } from "../../src/platform/db.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { tempDir } from "../helpers/server.js";

let t: TestApp;
afterEach(() => t.close());

describe("database constraints", () => {
  it("the partial unique index allows one read_write endpoint per branch even when code is bypassed", async () => {
    t = createTestApp();
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    const row = t.ctx.db.select().from(endpoints).where(eq(endpoints.id, p.body.endpoints[0].id)).get();
    if (!row) throw new Error("endpoint row missing");
    expect(() =>
      t.ctx.db
        .insert(endpoints)
        .values({ ...row, id: "ep-second-rw" })
        .run(),
    ).toThrow(/UNIQUE constraint failed/);
    // Read-only endpoints are not limited.
    t.ctx.db
      .insert(endpoints)
      .values({ ...row, id: "ep-ro-1", type: "read_only" })
      .run();
    t.ctx.db
      .insert(endpoints)
      .values({ ...row, id: "ep-ro-2", type: "read_only" })
      .run();
  });

  it("runs with WAL, foreign keys and a busy timeout", () => {
    // A file database, as the server opens it (an in-memory one cannot journal to a WAL).
    const storage = openStorage(path.join(tempDir(), "wal.db"));
    try {
      expect(storage.sqlite.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(storage.sqlite.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(storage.sqlite.pragma("busy_timeout", { simple: true })).toBe(5000);
    } finally {
      storage.close();
    }
  });

  it("finds an endpoint's unfinished operations through a partial index, not its whole history", () => {
    t = createTestApp();
    const sqlite = (t.ctx.db as unknown as { $client: import("better-sqlite3").Database }).$client;
    const plan = sqlite
      .prepare(
        "EXPLAIN QUERY PLAN SELECT id FROM operations WHERE endpoint_id = ? AND status IN ('scheduling', 'running') ORDER BY created_us",
      )
      .all("ep-x");
    expect(JSON.stringify(plan)).toContain("operations_endpoint_unfinished_idx");
  });
});
