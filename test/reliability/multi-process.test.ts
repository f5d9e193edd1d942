import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import type { Ctx } from "../../src/context.js";
import { ensureDefaultAccount } from "../../src/control-plane/accounts/service.js";
import { createApiKey } from "../../src/control-plane/api-keys/service.js";
import { DEFAULT_OPERATION_MS } from "../../src/control-plane/operations/rules.js";
import { ManualClock } from "../../src/platform/clock.js";
import { openStorage, type Storage } from "../../src/platform/db.js";
import { IdGenerator } from "../../src/platform/ids.js";
import { Worker } from "../../src/worker/loop.js";
import {
  Client,
  must,
  type Proc,
  type Reply,
  randomKey,
  SOAK,
  spawnServer,
  tempDir,
} from "./support/server.js";

/**
 * Regression (found by running `npm run keys` against a server under load): the keys CLI writes
 * the same database file from another process, as the README invites. A request transaction
 * began DEFERRED, read, and if the CLI committed before the request's first write SQLite refused
 * the upgrade with SQLITE_BUSY_SNAPSHOT, which no busy timeout retries: an HTTP 500.
 */

const run = promisify(execFile);

/** A manual clock that, while armed, makes another connection commit a write each time it is read. */
class InterferingClock extends ManualClock {
  armed = false;
  interference = 0;
  constructor(
    start: number,
    private readonly other: Database.Database,
  ) {
    super(start);
  }
  override now(accountId: string | null): number {
    if (this.armed) {
      try {
        this.other
          .prepare(
            "INSERT INTO emulator_state (key, value) VALUES ('other-process', '1') ON CONFLICT DO UPDATE SET value = value + 1",
          )
          .run();
        this.interference++;
      } catch {
        // Locked out by a transaction holding the write lock: exactly what must happen.
      }
    }
    return super.now(accountId);
  }
}

let storage: Storage | undefined;
let other: Database.Database | undefined;
const procs: Proc[] = [];
afterEach(async () => {
  storage?.close();
  other?.close();
  for (const p of procs.splice(0)) await p.stop("SIGKILL");
});

describe("another process writing the same database file", () => {
  it("a commit by another process in the middle of a request's transaction is not a 500", async () => {
    const file = path.join(tempDir(), "two-writers.db");
    storage = openStorage(file);
    other = new Database(file);
    other.pragma("busy_timeout = 0");
    const clock = new InterferingClock(Date.parse("2025-01-01T00:00:00Z"), other);
    const ctx: Ctx = {
      db: storage.db,
      clock,
      ids: new IdGenerator(),
      config: {
        plan: "paid",
        domain: "neon.tech",
        maxBodyBytes: 64 * 1024,
        operationMs: { ...DEFAULT_OPERATION_MS },
        checkIntervalSeconds: 3600,
        operationRetentionDays: 180,
        projectRecoverySeconds: 7 * 86400,
      },
    };
    const key = createApiKey(ctx, ensureDefaultAccount(ctx).id, "k").key;
    const app = createApp(ctx, { logger: pino({ level: "silent" }), worker: new Worker(ctx) });
    const send = async (method: string, url: string, body?: unknown) => {
      const res = await app.request(url, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: bodies are read field by field
      return { status: res.status, body: (await res.json()) as any };
    };
    const project = await send("POST", "/api/v2/projects", { project: {} });
    expect(project.status).toBe(201);
    const pid = project.body.project.id as string;

    clock.armed = true;
    const results = [
      await send("POST", `/api/v2/projects/${pid}/branches`, { branch: { name: "during" } }),
      await send("POST", "/api/v2/api_keys", { key_name: "during" }),
      await send("PATCH", `/api/v2/projects/${pid}`, { project: { name: "renamed" } }),
      await send("POST", "/api/v2/projects", { project: { name: "second" } }),
    ];
    clock.armed = false;
    expect(results.map((r) => r.status)).toEqual([201, 200, 200, 201]);
    expect(clock.interference, "the other connection did commit between requests").toBeGreaterThan(0);
  });

  it("the keys CLI and a busy server write the same file: no 5xx", async () => {
    const file = path.join(tempDir(), "cli.db");
    const key = randomKey();
    const server = await spawnServer({ NEON_EMULATOR_DB: file, NEON_EMULATOR_API_KEY: key });
    procs.push(server);
    const c = new Client(server.url, 16);
    const pid = must(await c.request("POST", "/api/v2/projects", { key, body: { project: {} } }), 201).body
      .project.id;
    let stop = false;
    const replies: Reply[] = [];
    const load = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const r =
          i % 2 === 0
            ? await c.request("POST", "/api/v2/api_keys", { key, body: { key_name: `w${w}-${i}` } })
            : await c.request("POST", `/api/v2/projects/${pid}/branches`, { key, body: {} });
        replies.push(r);
      }
    };
    const loads = Array.from({ length: 8 }, (_, w) => load(w));
    const cli = path.resolve("dist/cli/keys.cjs");
    const env = { ...process.env, NEON_EMULATOR_DB: file };
    try {
      await Promise.all(
        Array.from({ length: 2 }, async () => {
          for (let i = 0; i < (SOAK ? 40 : 3); i++)
            await run(process.execPath, [cli, "create", `cli-${i}`], { env });
        }),
      );
    } finally {
      stop = true;
      await Promise.all(loads);
      c.close();
    }
    expect(replies.length).toBeGreaterThan(20);
    expect(replies.filter((r) => r.status >= 500 || r.status === 0).map((r) => r.text)).toEqual([]);
  }, 120_000);
});
