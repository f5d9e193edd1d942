import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicContract } from "./contract.js";
import { type E2E, startE2E, waitFor } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: CLI output is asserted field by field
type Json = any;

/**
 * neon 6 commands that reach into a branch's data, against a server with real computes:
 * schema-diff, branches reset, snapshots (create, list, restore, finalize, delete) and their
 * schedule. What the CLI prints is checked against the rows Postgres returns.
 */
describe("neon 6 on branch data (real computes)", { timeout: 120_000 }, () => {
  let e2e: E2E;
  let projectId = "";
  let uri = "";

  const runJson = (step: string, args: string[]): Promise<Json> => {
    e2e.step(`neon6 data: ${step}`);
    return e2e.neonJson([...args, "--project-id", projectId]);
  };
  const run = (step: string, args: string[]) => {
    e2e.step(`neon6 data: ${step}`);
    return e2e.neon([...args, "--project-id", projectId]);
  };
  /** Runs SQL through the front door on the endpoint `uri` names (the default branch's compute). */
  async function sql(text: string, on = uri): Promise<Json[]> {
    const client = new pg.Client({ connectionString: on, ssl: false });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  }
  const branchNamed = async (name: string) =>
    (await runJson("branches list", ["branches", "list"])).find((b: Json) => b.name === name);

  beforeAll(async () => {
    e2e = await startE2E({ NEON_EMULATOR_COMPUTE: "postgres", NEON_EMULATOR_PG_PORT: "0" }, "neon 6");
    e2e.step("neon6 data: projects create");
    const created = await e2e.neonJson<Json>(["projects", "create", "--name", "data"]);
    projectId = created.project.id;
    uri = created.connection_uris[0].connection_uri.replace(/[?&]sslmode=[^&]*/, "");
    await waitFor("the compute", async () => (await sql("SELECT 1 AS ok").catch(() => undefined))?.[0]);
    await sql("CREATE TABLE notes (id int PRIMARY KEY, body text)");
    await sql("INSERT INTO notes VALUES (1, 'kept')");
  });
  afterAll(async () => {
    await e2e?.close();
  });

  it("branches create + schema-diff show a column added on the child", async () => {
    await runJson("branches create", ["branches", "create", "--name", "feature", "--compute"]);
    const feature = await branchNamed("feature");
    // The API's connection URI names the front door (the CLI's own is built from the endpoint's host name).
    e2e.step("neon6 data: connection_uri of feature");
    const res = await fetch(
      `${e2e.apiBase}/projects/${projectId}/connection_uri?branch_id=${feature.id}&database_name=neondb&role_name=neondb_owner`,
      { headers: { authorization: `Bearer ${e2e.key}` } },
    );
    const featureUri = ((await res.json()) as Json).uri.replace(/[?&]sslmode=[^&]*/, "");
    await waitFor(
      "the feature compute",
      async () => (await sql("SELECT 1 AS ok", featureUri).catch(() => undefined))?.[0],
    );
    await sql("ALTER TABLE notes ADD COLUMN tag text", featureUri);
    const diff = await run("schema-diff", [
      "branches",
      "schema-diff",
      "main",
      feature.id,
      "--database",
      "neondb",
    ]);
    expect(diff).toContain("tag text");
  });

  it("branches reset --parent brings the child back to its parent's data", async () => {
    const feature = await branchNamed("feature");
    await run("branches reset", [
      "branches",
      "reset",
      feature.id,
      "--parent",
      "--preserve-under-name",
      "feature_before",
    ]);
    const reset = await waitFor("the reset", async () => {
      const b = await branchNamed("feature");
      return b.current_state === "ready" ? b : undefined;
    });
    expect(reset.id).toBe(feature.id);
    expect(await branchNamed("feature_before")).toBeDefined();
    const diff = await run("schema-diff (after reset)", [
      "branches",
      "schema-diff",
      "main",
      feature.id,
      "--database",
      "neondb",
    ]);
    expect(diff).not.toContain("tag text");
  });

  it("snapshots: create, list, restore --finalize puts the old rows back behind the same connection string, delete", async () => {
    const snap = await runJson("snapshots create", [
      "snapshots",
      "create",
      "--branch",
      "main",
      "--name",
      "before-wipe",
    ]);
    expect(snap).toMatchObject({ name: "before-wipe", id: expect.stringMatching(/^snap-/) });
    const listed = await runJson("snapshots list", ["snapshots", "list"]);
    expect(listed.map((s: Json) => s.name)).toContain("before-wipe");
    await sql("DELETE FROM notes");
    await run("snapshots restore", [
      "snapshots",
      "restore",
      "before-wipe",
      "--target-branch",
      "main",
      "--finalize",
    ]);
    const rows = await waitFor("the restored rows", async () => {
      const r = await sql("SELECT body FROM notes").catch(() => undefined);
      return r?.length ? r : undefined;
    });
    expect(rows).toEqual([{ body: "kept" }]);
    await run("snapshots delete", ["snapshots", "delete", snap.id]);
    expect(
      (await runJson("snapshots list (after delete)", ["snapshots", "list"])).map((s: Json) => s.id),
    ).not.toContain(snap.id);
  });

  it("snapshots schedule set and get", async () => {
    await run("snapshots schedule set", [
      "snapshots",
      "schedule",
      "set",
      "--branch",
      "main",
      "--frequency",
      "daily",
      "--hour",
      "3",
    ]);
    const schedule = await runJson("snapshots schedule get", [
      "snapshots",
      "schedule",
      "get",
      "--branch",
      "main",
    ]);
    expect(JSON.stringify(schedule)).toContain('"daily"');
  });

  it("branches create --schema-only: a root branch with main's tables and none of its rows", async () => {
    await runJson("branches create --schema-only", [
      "branches",
      "create",
      "--name",
      "masked",
      "--schema-only",
      "--compute",
    ]);
    const masked = await branchNamed("masked");
    expect(masked.init_source).toBe("schema-only");
    expect(masked.parent_id).toBeUndefined();
    e2e.step("neon6 data: connection_uri of masked");
    const res = await fetch(
      `${e2e.apiBase}/projects/${projectId}/connection_uri?branch_id=${masked.id}&database_name=neondb&role_name=neondb_owner`,
      { headers: { authorization: `Bearer ${e2e.key}` } },
    );
    const maskedUri = ((await res.json()) as Json).uri.replace(/[?&]sslmode=[^&]*/, "");
    const count = "SELECT count(*)::int AS n FROM notes";
    await waitFor(
      "the masked compute",
      async () => (await sql(count, maskedUri).catch(() => undefined))?.[0],
    );
    expect(await sql(count, maskedUri)).toEqual([{ n: 0 }]);
    expect((await sql(count))[0].n).toBeGreaterThan(0);
  });

  it("projects update --enable-logical-replication: the compute comes back with wal_level=logical", async () => {
    e2e.step("neon6 data: projects update --enable-logical-replication");
    const updated = await e2e.neonJson<Json>([
      "projects",
      "update",
      projectId,
      "--enable-logical-replication",
      "--yes",
    ]);
    expect(updated.settings.enable_logical_replication).toBe(true);
    // The update suspends the compute; a connection after that wakes it with the new setting (one
    // made before the suspend finishes still reaches the old server).
    await waitFor("a compute with wal_level=logical", async () => {
      const rows = await sql("SELECT current_setting('wal_level') AS wal_level").catch(() => undefined);
      return rows?.[0]?.wal_level === "logical" ? true : undefined;
    });
    await sql("SELECT pg_create_logical_replication_slot('cli_slot', 'pgoutput')");
    expect(await sql("SELECT slot_name, plugin FROM pg_replication_slots")).toEqual([
      { slot_name: "cli_slot", plugin: "pgoutput" },
    ]);
  });

  it("ip-allow add / remove / reset: the front door lets in only the addresses the list holds", async () => {
    const refused = /This IP address 127\.0\.0\.1 is not allowed to connect to this endpoint/;
    const added = await runJson("ip-allow add", [
      "ip-allow",
      "add",
      "10.0.0.0/8",
      "192.168.1.20-192.168.1.50",
    ]);
    expect(added.IP_addresses).toEqual(["10.0.0.0/8", "192.168.1.20-192.168.1.50"]);
    await expect(sql("SELECT 1")).rejects.toThrow(refused);
    const withLocal = await runJson("ip-allow add", ["ip-allow", "add", "127.0.0.1"]);
    expect(withLocal.IP_addresses).toContain("127.0.0.1");
    expect(await sql("SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
    await runJson("ip-allow remove", ["ip-allow", "remove", "127.0.0.1"]);
    await expect(sql("SELECT 1")).rejects.toThrow(refused);
    const reset = await runJson("ip-allow reset", ["ip-allow", "reset"]);
    expect(reset.IP_addresses).toEqual([]);
    expect(await sql("SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
  });

  it("branches create --parent <time>, branches restore ^self@<time>: the data as it was then", async () => {
    await sql("CREATE TABLE moments (n int)");
    await sql("INSERT INTO moments VALUES (1)");
    await new Promise((r) => setTimeout(r, 20));
    // A time between the two commits, as the CLI takes one (milliseconds, Z).
    const at = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await sql("INSERT INTO moments VALUES (2)");

    await runJson("branches create --parent <time>", [
      "branches",
      "create",
      "--name",
      "then",
      "--parent",
      at,
      "--compute",
    ]);
    const then = await waitFor("the branch at a time", async () => {
      const b = await branchNamed("then");
      return b?.current_state === "ready" ? b : undefined;
    });
    expect(Date.parse(then.parent_timestamp)).toBe(Date.parse(at));
    e2e.step("neon6 data: connection_uri of then");
    const res = await fetch(
      `${e2e.apiBase}/projects/${projectId}/connection_uri?branch_id=${then.id}&database_name=neondb&role_name=neondb_owner`,
      { headers: { authorization: `Bearer ${e2e.key}` } },
    );
    const thenUri = ((await res.json()) as Json).uri.replace(/[?&]sslmode=[^&]*/, "");
    const rows = "SELECT n FROM moments ORDER BY n";
    expect(await waitFor("the branch's rows", () => sql(rows, thenUri).catch(() => undefined))).toEqual([
      { n: 1 },
    ]);

    await run("branches restore ^self@<time>", [
      "branches",
      "restore",
      "main",
      `^self@${at}`,
      "--preserve-under-name",
      "main_before_restore",
    ]);
    await waitFor(
      "the restore",
      async () => (await branchNamed("main"))?.current_state === "ready" || undefined,
    );
    expect(
      await waitFor("main's rows then", async () => {
        const r = await sql(rows).catch(() => undefined);
        return r?.length === 1 ? r : undefined;
      }),
    ).toEqual([{ n: 1 }]);
    expect((await branchNamed("main")).parent_id).toBe((await branchNamed("main_before_restore")).id);
  });

  it("every response the CLI received matches the public OpenAPI contract", () => {
    expect(publicContract().checkAll(e2e.traffic)).toEqual([]);
  });
});
