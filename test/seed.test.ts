import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Ctx } from "../src/context.js";
import { accounts } from "../src/control-plane/accounts/table.js";
import { apiKeys } from "../src/control-plane/api-keys/table.js";
import { branches } from "../src/control-plane/branches/table.js";
import { endpoints } from "../src/control-plane/endpoints/table.js";
import { DEFAULT_OPERATION_MS } from "../src/control-plane/operations/rules.js";
import { operations } from "../src/control-plane/operations/table.js";
import { projects } from "../src/control-plane/projects/table.js";
import { originOf } from "../src/control-plane/roles-databases/store.js";
import { databases, roles } from "../src/control-plane/roles-databases/table.js";
import { ManualClock } from "../src/platform/clock.js";
import { openStorage, type Storage } from "../src/platform/db.js";
import { IdGenerator } from "../src/platform/ids.js";
import { applySeedFile, demoSeedFile, SeedError } from "../src/seed/apply.js";
import { tempDir } from "./helpers/server.js";

const storages: Storage[] = [];
afterEach(() => {
  for (const s of storages.splice(0)) s.close();
});

function freshCtx(): Ctx {
  const storage = openStorage(":memory:");
  storages.push(storage);
  return {
    db: storage.db,
    clock: new ManualClock(Date.parse("2025-01-01T00:00:00Z")),
    ids: new IdGenerator(),
    config: {
      plan: "paid",
      domain: "neon.tech",
      maxBodyBytes: 1 << 20,
      operationMs: DEFAULT_OPERATION_MS,
      checkIntervalSeconds: 3600,
      operationRetentionDays: 180,
      projectRecoverySeconds: 7 * 86400,
    },
  };
}

function snapshot(ctx: Ctx) {
  const db = ctx.db;
  return {
    accounts: db.select({ id: accounts.id, orgId: accounts.orgId, name: accounts.name }).from(accounts).all(),
    keys: db.select({ name: apiKeys.name, keyHash: apiKeys.keyHash }).from(apiKeys).all(),
    projects: db.select({ id: projects.id, name: projects.name }).from(projects).all(),
    branches: db
      .select({ id: branches.id, name: branches.name, parentId: branches.parentId })
      .from(branches)
      .all(),
    endpoints: db
      .select({
        id: endpoints.id,
        host: endpoints.host,
        currentState: endpoints.currentState,
        type: endpoints.type,
      })
      .from(endpoints)
      .all(),
    roles: db
      .select({ name: roles.name, password: roles.password, branchId: roles.branchId })
      .from(roles)
      .all(),
  };
}

function writeSeed(content: unknown): string {
  const file = path.join(tempDir(), "seed.json");
  fs.writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

describe("seeds", () => {
  it("applies the demo seed: projects, branches with parents, active and idle endpoints, a read replica, history", () => {
    const ctx = freshCtx();
    const keys = applySeedFile(ctx, demoSeedFile());
    expect(keys?.map((k) => k.name)).toEqual(["demo key", "ci"]);
    const s = snapshot(ctx);
    expect(s.projects.map((p) => p.name)).toEqual(["storefront", "analytics-warehouse", "side-project"]);
    expect(s.branches.filter((b) => b.parentId !== null).length).toBeGreaterThan(1);
    const states = new Set(s.endpoints.map((e) => e.currentState));
    expect(states).toEqual(new Set(["active", "idle"]));
    expect(s.endpoints.some((e) => e.type === "read_only")).toBe(true);
    const ops = ctx.db.select().from(operations).all();
    expect(ops.length).toBeGreaterThan(5);
    expect(ops.every((o) => o.status === "finished")).toBe(true);
  });

  it("a child branch's database of its parent's name is that database's copy: it keeps its origin (the mark its data carries)", () => {
    const ctx = freshCtx();
    applySeedFile(ctx, demoSeedFile());
    const s = snapshot(ctx);
    const rows = ctx.db.select().from(databases).all();
    const shop = (branch: string) => {
      const id = s.branches.find((b) => b.name === branch)?.id;
      const row = rows.find((d) => d.branchId === id && d.name === "shop");
      return row && originOf(row);
    };
    expect(shop("main")).toBeDefined();
    expect(shop("staging")).toBe(shop("main"));
    expect(shop("preview/pr-142-checkout")).toBe(shop("main"));
  });

  it("yields the same ids, names and keys every time", () => {
    const a = freshCtx();
    const b = freshCtx();
    const keysA = applySeedFile(a, demoSeedFile());
    const keysB = applySeedFile(b, demoSeedFile());
    expect(keysA).toEqual(keysB);
    expect(snapshot(a)).toEqual(snapshot(b));
  });

  it("is not applied to a database that already holds data", () => {
    const ctx = freshCtx();
    applySeedFile(ctx, demoSeedFile());
    expect(applySeedFile(ctx, demoSeedFile())).toBeNull();
    expect(snapshot(ctx).projects).toHaveLength(3);
  });

  it.each([
    ["not JSON", "{", /not valid JSON/],
    ["no accounts", { accounts: [] }, /accounts: a seed needs at least one account/],
    ["an unknown field", { accounts: [{ name: "a", email: "a@b.co", colour: "red" }] }, /accounts\.0/],
    [
      "a bad compute size",
      {
        accounts: [
          {
            name: "a",
            email: "a@b.co",
            projects: [{ name: "p", branches: [{ name: "main", endpoints: [{ min_cu: 3.5 }] }] }],
          },
        ],
      },
      /accounts\.0\.projects\.0\.branches\.0\.endpoints\.0\.min_cu/,
    ],
    [
      "an unknown parent",
      {
        accounts: [
          {
            name: "a",
            email: "a@b.co",
            projects: [{ name: "p", branches: [{ name: "main" }, { name: "x", parent: "ghost" }] }],
          },
        ],
      },
      /branches\.1\.parent/,
    ],
    [
      "a database owned by no role",
      {
        accounts: [
          {
            name: "a",
            email: "a@b.co",
            projects: [
              { name: "p", branches: [{ name: "main", databases: [{ name: "d", owner: "nobody" }] }] },
            ],
          },
        ],
      },
      /databases\.0\.owner/,
    ],
  ])("rejects %s with a message naming the place, writing nothing", (_name, content, message) => {
    const ctx = freshCtx();
    expect(() => applySeedFile(ctx, writeSeed(content))).toThrow(message);
    try {
      applySeedFile(ctx, writeSeed(content));
    } catch (err) {
      expect(err).toBeInstanceOf(SeedError);
    }
    expect(snapshot(ctx).projects).toEqual([]);
    expect(snapshot(ctx).accounts).toEqual([]);
  });

  it("uses keys given in the file as they are", () => {
    const ctx = freshCtx();
    const key = "k".repeat(64);
    const generated = applySeedFile(
      ctx,
      writeSeed({ accounts: [{ name: "a", email: "a@b.co", keys: [{ name: "fixed", key }] }] }),
    );
    expect(generated).toEqual([]);
    expect(JSON.stringify(snapshot(ctx).keys)).not.toContain(key);
  });
});
