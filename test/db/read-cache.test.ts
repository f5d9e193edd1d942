import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Ctx } from "../../src/context.js";
import { ensureDefaultAccount } from "../../src/control-plane/accounts/service.js";
import { authenticate, createApiKey } from "../../src/control-plane/api-keys/service.js";
import { ManualClock } from "../../src/platform/clock.js";
import { openStorage, type Storage } from "../../src/platform/db.js";
import { IdGenerator } from "../../src/platform/ids.js";
import { cachedRead } from "../../src/platform/read-cache.js";
import { CLOCK_START, testConfig } from "../helpers/app.js";
import { tempDir } from "../helpers/server.js";

// The emulator's connection and a second one on the same file, standing in for another process
// (the keys CLI): cached reads must see every commit of either, from the next request on.
let storage: Storage;
let other: Database.Database;
let ctx: Ctx;

beforeEach(() => {
  const file = path.join(tempDir(), "db.sqlite");
  storage = openStorage(file);
  other = new Database(file);
  ctx = {
    db: storage.db,
    clock: new ManualClock(CLOCK_START),
    ids: new IdGenerator(),
    config: testConfig(),
  };
});
afterEach(() => {
  other.close();
  storage.close();
});

describe("cachedRead", () => {
  it("reads again only after a change by this connection or a commit by another one", () => {
    let reads = 0;
    const read = (request: object) => cachedRead(ctx.db, "answer", () => ++reads, request);
    expect(read({})).toBe(1);
    expect(read({})).toBe(1); // nothing changed: served from the cache
    ensureDefaultAccount(ctx); // a change by this connection
    expect(read({})).toBe(2);
    expect(read({})).toBe(2);
    other.exec("CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1)"); // another connection commits
    expect(read({})).toBe(3);
    other.prepare("UPDATE scratch SET x = 2").run();
    expect(read({})).toBe(4);
  });

  it("never keeps what it read inside a transaction", () => {
    let reads = 0;
    ctx.db.transaction(() => {
      cachedRead(ctx.db, "answer", () => ++reads, {});
      cachedRead(ctx.db, "answer", () => ++reads, {});
    });
    expect(reads).toBe(2);
    expect(cachedRead(ctx.db, "answer", () => ++reads, {})).toBe(3);
  });

  it("looks for other connections' commits once per request, and again in the next one", () => {
    let reads = 0;
    const request = {};
    cachedRead(ctx.db, "answer", () => ++reads, request);
    other.exec("CREATE TABLE scratch (x)");
    // Within the request, its first read is the moment it reads at.
    expect(cachedRead(ctx.db, "answer", () => ++reads, request)).toBe(1);
    expect(cachedRead(ctx.db, "answer", () => ++reads, {})).toBe(2);
  });
});

describe("authentication through the cache", () => {
  it("refuses a key revoked by another process on the next request, though this one wrote nothing", () => {
    const account = ensureDefaultAccount(ctx);
    const { id, key } = createApiKey(ctx, account.id, "cli-revoked");
    const auth = () => authenticate(ctx, `Bearer ${key}`, "127.0.0.1", {});
    expect(auth().keyId).toBe(id);
    const changes = storage.sqlite.prepare("SELECT total_changes()").pluck();
    const before = changes.get();
    expect(auth().keyId).toBe(id); // same second, same address: nothing written, the key row now cached
    expect(changes.get()).toBe(before);
    other.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run(CLOCK_START, id);
    expect(auth).toThrow(/revoked/);
  });

  it("refuses a key revoked by this process on the next request", () => {
    const account = ensureDefaultAccount(ctx);
    const { id, key } = createApiKey(ctx, account.id, "api-revoked");
    const auth = () => authenticate(ctx, `Bearer ${key}`, "127.0.0.1", {});
    auth();
    auth();
    storage.sqlite.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run(CLOCK_START, id);
    expect(auth).toThrow(/revoked/);
  });
});
