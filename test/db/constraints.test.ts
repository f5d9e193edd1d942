import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { afterEach, describe, expect, it } from "vitest";
import { endpoints } from "../../src/control-plane/endpoints/table.js";
import { EMPTY_DATABASE, openStorage } from "../../src/platform/db.js";
import { packageRoot } from "../../src/platform/package-root.js";
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

describe("a new database file", () => {
  const schemaOf = (file: string) => {
    const storage = openStorage(file, { template: false });
    try {
      return {
        schema: storage.sqlite
          .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name")
          .all(),
        migrations: storage.sqlite
          .prepare("SELECT hash, created_at FROM __drizzle_migrations ORDER BY id")
          .all(),
      };
    } finally {
      storage.close();
    }
  };

  it("starts as a copy of the build's template, which is every migration applied: the same schema and history", () => {
    const template = path.join(packageRoot(), EMPTY_DATABASE);
    expect(fs.existsSync(template), "npm run build makes dist/empty.sqlite").toBe(true);
    const dir = tempDir();
    const migrated = path.join(dir, "migrated.db");
    const copied = path.join(dir, "copied.db");
    const fromScratch = schemaOf(migrated);
    openStorage(copied).close();
    expect(schemaOf(copied)).toEqual(fromScratch);
    expect(fromScratch.migrations.length).toBe(
      fs.readdirSync(path.join(packageRoot(), "migrations")).filter((f) => f.endsWith(".sql")).length,
    );
    // The owner's alone, like any new database; nothing left beside it.
    expect(fs.statSync(copied).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir).filter((f) => f.includes(".new-"))).toEqual([]);
  });

  it("is what the template holds (an older one is migrated the rest of the way); an existing file is never replaced", () => {
    const dir = tempDir();
    // A template as an older build made it: the first five migrations only, and a table to
    // recognise it by.
    const folder = path.join(dir, "migrations");
    fs.cpSync(path.join(packageRoot(), "migrations"), folder, { recursive: true });
    const journal = JSON.parse(fs.readFileSync(path.join(folder, "meta", "_journal.json"), "utf8"));
    journal.entries = journal.entries.slice(0, 5);
    fs.writeFileSync(path.join(folder, "meta", "_journal.json"), JSON.stringify(journal));
    const old = path.join(dir, "old-template.db");
    const sqlite = new Database(old);
    migrate(drizzle(sqlite), { migrationsFolder: folder });
    sqlite.exec("CREATE TABLE template_marker (x)");
    sqlite.close();
    const file = path.join(dir, "new.db");
    openStorage(file, { template: old }).close();
    const made = schemaOf(file);
    expect(made.schema.some((r) => (r as { name: string }).name === "template_marker")).toBe(true);
    // The migrations the template lacked were applied on top: the same history as a new file's.
    expect(made.migrations).toEqual(schemaOf(path.join(dir, "scratch.db")).migrations);
    // An existing file (even an empty one) is opened as it is, never swapped for the template.
    const existing = path.join(dir, "existing.db");
    fs.writeFileSync(existing, "", { mode: 0o600 });
    openStorage(existing, { template: old }).close();
    expect(schemaOf(existing).schema.some((r) => (r as { name: string }).name === "template_marker")).toBe(
      false,
    );
  });
});
