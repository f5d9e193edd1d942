import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { apiKeys } from "../../src/control-plane/api-keys/table.js";
import { hashKey } from "../../src/platform/ids.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeEach(() => {
  t = createTestApp();
});
afterEach(() => t.close());

describe("POST /api_keys", () => {
  it("creates a key shown once: 64 chars of [a-z0-9], with id, name, created_at, created_by", async () => {
    const res = await t.api("POST", "/api/v2/api_keys", { key_name: "ci" });
    expectStatus(res, 200);
    expect(res.body.key).toMatch(/^[a-z0-9]{64}$/);
    expect(res.body).toMatchObject({ name: "ci", created_by: t.accountId });
    expect(typeof res.body.id).toBe("number");
    expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(res.headers.get("content-type")).toContain("application/json");
    // The new key works at once.
    const me = await t.request("GET", "/api/v2/api_keys", undefined, {
      authorization: `Bearer ${res.body.key}`,
    });
    expectStatus(me, 200);
  });

  it("stores only the SHA-256 hash, never the key", async () => {
    const res = await t.api("POST", "/api/v2/api_keys", { key_name: "hashed" });
    const rows = t.ctx.db.select().from(apiKeys).all();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(res.body.key);
    const row = t.ctx.db.select().from(apiKeys).where(eq(apiKeys.id, res.body.id)).get();
    expect(row?.keyHash).toBe(hashKey(res.body.key));
  });

  it.each([
    [{}, "key_name"],
    [{ key_name: "" }, "key_name"],
    [{ key_name: 5 }, "key_name"],
    [{ key_name: "x".repeat(65) }, "key_name"],
  ])("rejects %j with a 400 naming the field", async (body, field) => {
    const before = t.ctx.db.select().from(apiKeys).all().length;
    const res = await t.api("POST", "/api/v2/api_keys", body);
    expectStatus(res, 400);
    expect(res.body.message).toContain(field);
    expect(t.ctx.db.select().from(apiKeys).all().length).toBe(before);
  });

  it("accepts a 64-character name", async () => {
    expectStatus(await t.api("POST", "/api/v2/api_keys", { key_name: "n".repeat(64) }), 200);
  });

  it("rejects malformed JSON with a 400 JSON error", async () => {
    const res = await t.api("POST", "/api/v2/api_keys", "{not json");
    expectStatus(res, 400);
    expect(res.body).toMatchObject({ code: "INVALID_REQUEST" });
    expect(res.body.message).toMatch(/JSON/);
  });
});

describe("GET /api_keys", () => {
  it("lists active keys without any secret, with last_used_* kept up to date", async () => {
    const created = await t.api("POST", "/api/v2/api_keys", { key_name: "second" });
    t.clock.set(t.clock.now() + 5000);
    await t.request("GET", "/api/v2/projects", undefined, { authorization: `Bearer ${created.body.key}` });
    const res = await t.api("GET", "/api/v2/api_keys");
    expectStatus(res, 200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.text).not.toContain(created.body.key);
    expect(res.text).not.toContain(t.key);
    for (const item of res.body) expect(Object.keys(item)).not.toContain("key");
    const second = res.body.find((k: { id: number }) => k.id === created.body.id);
    expect(second).toMatchObject({
      name: "second",
      last_used_at: new Date(t.clock.now()).toISOString().replace(".000Z", "Z"),
      last_used_from_addr: "127.0.0.1",
    });
  });

  it("keeps last_used_at to the second and writes it only when the second or address changes", async () => {
    const sqlite = (t.ctx.db as unknown as { $client: import("better-sqlite3").Database }).$client;
    const changes = () => (sqlite.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
    const created = await t.api("POST", "/api/v2/api_keys", { key_name: "busy" });
    const auth = { authorization: `Bearer ${created.body.key}` };
    const second = Math.floor(t.clock.now() / 1000) * 1000 + 10_000;
    t.clock.set(second + 250);
    expectStatus(await t.request("GET", "/api/v2/projects", undefined, auth), 200);
    const afterFirst = changes();
    t.clock.set(second + 900);
    expectStatus(await t.request("GET", "/api/v2/projects", undefined, auth), 200);
    // Same second, same address: the read wrote nothing.
    expect(changes()).toBe(afterFirst);
    const shown = async () =>
      (await t.api("GET", "/api/v2/api_keys")).body.find((k: { id: number }) => k.id === created.body.id);
    expect((await shown()).last_used_at).toBe(new Date(second).toISOString().replace(".000Z", "Z"));
    t.clock.set(second + 1000);
    expectStatus(await t.request("GET", "/api/v2/projects", undefined, auth), 200);
    expect((await shown()).last_used_at).toBe(new Date(second + 1000).toISOString().replace(".000Z", "Z"));
  });

  it("shows null last_used_at for a key never used", async () => {
    const created = await t.api("POST", "/api/v2/api_keys", { key_name: "unused" });
    const res = await t.api("GET", "/api/v2/api_keys");
    expect(res.body.find((k: { id: number }) => k.id === created.body.id)).toMatchObject({
      last_used_at: null,
      last_used_from_addr: "",
    });
  });
});

describe("DELETE /api_keys/{key_id}", () => {
  it("revokes immediately and irreversibly, with the public response shape", async () => {
    const created = await t.api("POST", "/api/v2/api_keys", { key_name: "doomed" });
    const auth = { authorization: `Bearer ${created.body.key}` };
    expectStatus(await t.request("GET", "/api/v2/api_keys", undefined, auth), 200);
    const res = await t.api("DELETE", `/api/v2/api_keys/${created.body.id}`);
    expectStatus(res, 200);
    expect(res.body).toMatchObject({
      id: created.body.id,
      name: "doomed",
      revoked: true,
      last_used_from_addr: "127.0.0.1",
    });
    expect(res.body.last_used_at).not.toBeNull();
    expect(res.body).toHaveProperty("created_at");
    expect(res.body).toHaveProperty("created_by");
    // The very next request with the key fails.
    const after = await t.request("GET", "/api/v2/api_keys", undefined, auth);
    expectStatus(after, 401);
    // It no longer appears in the list, and revoking again stays revoked.
    const list = await t.api("GET", "/api/v2/api_keys");
    expect(list.body.map((k: { id: number }) => k.id)).not.toContain(created.body.id);
    expectStatus(await t.api("DELETE", `/api/v2/api_keys/${created.body.id}`), 200);
    expectStatus(await t.request("GET", "/api/v2/api_keys", undefined, auth), 401);
  });

  it("answers 404 for an unknown key and 400 for a non-numeric id", async () => {
    expectStatus(await t.api("DELETE", "/api/v2/api_keys/999999"), 404);
    const bad = await t.api("DELETE", "/api/v2/api_keys/abc");
    expectStatus(bad, 400);
    expect(bad.body.message).toContain("key_id");
  });

  it("takes only a canonical positive integer: other spellings of a real key's id are 400 and revoke nothing", async () => {
    const made = await t.api("POST", "/api/v2/api_keys", { key_name: "spelled" });
    expectStatus(made, 200);
    const id: number = made.body.id;
    for (const spelling of [
      `0x${id.toString(16)}`,
      `${id}e0`,
      `+${id}`,
      `%20${id}`,
      `0${id}`,
      `${id}.0`,
      "0",
      "-1",
    ]) {
      const res = await t.api("DELETE", `/api/v2/api_keys/${spelling}`);
      expectStatus(res, 400);
      expect(res.body.message, spelling).toContain("must be a positive integer key id");
    }
    const listed = await t.api("GET", "/api/v2/api_keys");
    expect(listed.body.map((k: { id: number }) => k.id)).toContain(id);
    expectStatus(await t.api("DELETE", `/api/v2/api_keys/${id}`), 200);
  });

  it("cannot revoke another account's key (404)", async () => {
    const other = await t.api("POST", "/_emulator/accounts", {});
    expectStatus(other, 201);
    const res = await t.api("DELETE", `/api/v2/api_keys/${other.body.key.id}`);
    expectStatus(res, 404);
    const still = await t.request("GET", "/api/v2/api_keys", undefined, {
      authorization: `Bearer ${other.body.key.key}`,
    });
    expectStatus(still, 200);
  });
});
