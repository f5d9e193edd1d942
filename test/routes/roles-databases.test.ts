import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  dropsApplied,
  type ServerDatabase,
  syncServerCatalog,
} from "../../src/control-plane/roles-databases/service.js";
import { listDrops, recordDrop } from "../../src/control-plane/roles-databases/store.js";
import { verifierOf } from "../../src/platform/scram-verifier.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let branchId: string;
beforeEach(async () => {
  t = createTestApp();
  const res = await t.api("POST", "/api/v2/projects", { project: {} });
  projectId = res.body.project.id;
  branchId = res.body.branch.id;
  t.advance(1); // the branch is made (create_timeline): changes to its roles are accepted
});
afterEach(() => t.close());

const b = () => `/api/v2/projects/${projectId}/branches/${branchId}`;

describe("roles", () => {
  it("creates, lists, gets, reveals, resets and deletes a role, each change with apply_config", async () => {
    const created = await t.api("POST", `${b()}/roles`, { role: { name: "alice" } });
    expectStatus(created, 201);
    expect(created.body.role).toMatchObject({ name: "alice", branch_id: branchId });
    expect(created.body.role.password).toMatch(/\S{8,}/);
    expect(created.body.operations.map((o: { action: string }) => o.action)).toEqual(["apply_config"]);
    const list = await t.api("GET", `${b()}/roles`);
    expect(list.body.roles.map((r: { name: string }) => r.name)).toEqual(["neondb_owner", "alice"]);
    expect(list.text).not.toContain(created.body.role.password);
    expectStatus(await t.api("GET", `${b()}/roles/alice`), 200);
    const revealed = await t.api("GET", `${b()}/roles/alice/reveal_password`);
    expect(revealed.body.password).toBe(created.body.role.password);
    const reset = await t.request("POST", `${b()}/roles/alice/reset_password`, undefined, {
      authorization: `Bearer ${t.key}`,
    });
    expectStatus(reset, 200);
    expect(reset.body.role.password).not.toBe(created.body.role.password);
    expect((await t.api("GET", `${b()}/roles/alice/reveal_password`)).body.password).toBe(
      reset.body.role.password,
    );
    const del = await t.api("DELETE", `${b()}/roles/alice`);
    expectStatus(del, 200);
    expect(del.body.operations[0].action).toBe("apply_config");
    expectStatus(await t.api("GET", `${b()}/roles/alice`), 404);
  });

  it("rejects duplicates (409), bad names (400), unknown roles (404), and deleting a database owner (409)", async () => {
    expectStatus(await t.api("POST", `${b()}/roles`, { role: { name: "neondb_owner" } }), 409);
    const bad = await t.api("POST", `${b()}/roles`, { role: { name: "" } });
    expectStatus(bad, 400);
    expect(bad.body.message).toContain("role.name");
    // Neon's protected role names (any starting with pg; Postgres itself reserves pg_*, public and none).
    for (const name of [
      "pg_monitorish",
      "pgfoo",
      "public",
      "none",
      "cloud_admin",
      "neon_superuser",
      "zenith_admin",
    ]) {
      const reserved = await t.api("POST", `${b()}/roles`, { role: { name } });
      expectStatus(reserved, 400);
      expect(reserved.body.message).toContain(`role name "${name}" is reserved`);
    }
    const project = await t.api("POST", "/api/v2/projects", { project: { branch: { role_name: "pg_app" } } });
    expectStatus(project, 400);
    expect(project.body.message).toContain('role name "pg_app" is reserved');
    // Postgres keeps 63 bytes of a name (cutting a character in two): 40 two-byte characters are too many.
    const long = await t.api("POST", `${b()}/roles`, { role: { name: "ä".repeat(40) } });
    expectStatus(long, 400);
    expect(long.body.message).toContain("63 bytes");
    expectStatus(await t.api("POST", `${b()}/roles`, { role: { name: `${"ä".repeat(31)}x` } }), 201);
    expectStatus(await t.api("POST", `${b()}/roles`, { role: { name: "x".repeat(64) } }), 400);
    for (const name of [".", ".."]) {
      const dots = await t.api("POST", `${b()}/roles`, { role: { name } });
      expectStatus(dots, 400);
      expect(dots.body.message).toContain("must not be . or ..");
    }
    expectStatus(
      await t.api("POST", `${b()}/databases`, { database: { name: "..", owner_name: "neondb_owner" } }),
      400,
    );
    expectStatus(await t.api("GET", `${b()}/roles/ghost/reveal_password`), 404);
    const owner = await t.api("DELETE", `${b()}/roles/neondb_owner`);
    expectStatus(owner, 409);
    expect(owner.body.message).toContain("neondb");
  });
});

describe("databases", () => {
  it("creates, lists, gets, renames, re-owns and deletes a database, each change with apply_config", async () => {
    await t.api("POST", `${b()}/roles`, { role: { name: "bob" } });
    const created = await t.api("POST", `${b()}/databases`, {
      database: { name: "shop", owner_name: "bob" },
    });
    expectStatus(created, 201);
    expect(created.body.database).toMatchObject({ name: "shop", owner_name: "bob", branch_id: branchId });
    expect(created.body.operations[0].action).toBe("apply_config");
    expect(
      (await t.api("GET", `${b()}/databases`)).body.databases.map((d: { name: string }) => d.name),
    ).toEqual(["neondb", "shop"]);
    const renamed = await t.api("PATCH", `${b()}/databases/shop`, {
      database: { name: "store", owner_name: "neondb_owner" },
    });
    expectStatus(renamed, 200);
    expect(renamed.body.database).toMatchObject({ name: "store", owner_name: "neondb_owner" });
    expectStatus(await t.api("GET", `${b()}/databases/shop`), 404);
    expectStatus(await t.api("DELETE", `${b()}/databases/store`), 200);
    expectStatus(await t.api("GET", `${b()}/databases/store`), 404);
  });

  it("requires the owner to exist, and refuses duplicates", async () => {
    const noOwner = await t.api("POST", `${b()}/databases`, { database: { name: "x", owner_name: "ghost" } });
    expectStatus(noOwner, 404);
    expect(noOwner.body.message).toContain("ghost");
    expectStatus(
      await t.api("POST", `${b()}/databases`, { database: { name: "neondb", owner_name: "neondb_owner" } }),
      409,
    );
    expectStatus(await t.api("PATCH", `${b()}/databases/neondb`, { database: { owner_name: "ghost" } }), 404);
    const missing = await t.api("POST", `${b()}/databases`, { database: { name: "x" } });
    expectStatus(missing, 400);
    expect(missing.body.message).toContain("database.owner_name");
    for (const name of ["postgres", "template0", "template1"]) {
      const reserved = await t.api("POST", `${b()}/databases`, {
        database: { name, owner_name: "neondb_owner" },
      });
      expectStatus(reserved, 400);
      expect(reserved.body.message).toContain(`database name "${name}" is reserved`);
      expectStatus(await t.api("PATCH", `${b()}/databases/neondb`, { database: { name } }), 400);
    }
    expectStatus(
      await t.api("POST", "/api/v2/projects", { project: { branch: { database_name: "template1" } } }),
      400,
    );
    const long = await t.api("POST", `${b()}/databases`, {
      database: { name: "é".repeat(32), owner_name: "neondb_owner" },
    });
    expectStatus(long, 400);
    expect(long.body.message).toContain("63 bytes");
    expectStatus(
      await t.api("PATCH", `${b()}/databases/neondb`, { database: { name: "é".repeat(32) } }),
      400,
    );
    expect((await t.api("GET", `${b()}/databases`)).body.databases).toHaveLength(1);
  });
});

describe("what SQL did on the branch's compute (syncServerCatalog)", () => {
  type Db = { id: number; name: string; owner_name: string };
  const dbs = async (branch = b()): Promise<Db[]> =>
    (await t.api("GET", `${branch}/databases`)).body.databases;
  /** The roles as the compute holds them: the project's owner with the password the API gave it. */
  const serverRoles = async () => {
    const password = (await t.api("GET", `${b()}/roles/neondb_owner/reveal_password`)).body.password;
    const v = verifierOf(password);
    const text = `SCRAM-SHA-256$${v.iterations}:${v.salt.toString("base64")}$${v.storedKey.toString("base64")}:${v.serverKey.toString("base64")}`;
    return [{ name: "neondb_owner", verifier: text, canLogin: true }];
  };
  const sync = async (databases: ServerDatabase[], branch = branchId) =>
    syncServerCatalog(t.ctx, branch, { roles: await serverRoles(), databases });

  it("leaves to SQL a role or database named . or .., which no API path can name (the API refuses to make them)", async () => {
    const [neondb] = await dbs();
    const taken = await syncServerCatalog(t.ctx, branchId, {
      roles: [
        ...(await serverRoles()),
        { name: ".", verifier: null, canLogin: true },
        { name: "..", verifier: null, canLogin: true },
      ],
      databases: [
        { name: "neondb", owner: "neondb_owner", id: (neondb as Db).id },
        { name: ".", owner: "neondb_owner", id: undefined },
      ],
    });
    expect(taken).toEqual({ roles: [], databases: [] });
    expect((await t.api("GET", `${b()}/roles`)).body.roles.map((r: { name: string }) => r.name)).toEqual([
      "neondb_owner",
    ]);
    expect((await dbs()).map((d) => d.name)).toEqual(["neondb"]);
  });

  it("adds a database made with SQL, follows renames (swapped names too) and owners by its mark, and drops what SQL dropped", async () => {
    const [neondb] = await dbs();
    const id = (neondb as Db).id;
    const taken = await sync([
      { name: "neondb", owner: "neondb_owner", id },
      { name: "made", owner: "neondb_owner", id: undefined },
      // Owned by the emulator's administrator: not the control plane's.
      { name: "admins", owner: "cloud_admin", id: undefined },
      // Marked with an id this branch does not know (data from before a change): taken as new.
      { name: "restored", owner: "neondb_owner", id: id + 1000 },
    ]);
    const made = (await dbs()).find((d) => d.name === "made") as Db;
    const restored = (await dbs()).find((d) => d.name === "restored") as Db;
    expect(taken).toEqual({
      roles: [],
      databases: [
        { name: "made", id: made.id },
        { name: "restored", id: restored.id },
      ],
    });
    expect((await dbs()).map((d) => d.name)).toEqual(["neondb", "made", "restored"]);
    // ALTER DATABASE … RENAME both ways round in one transaction: each keeps its id.
    await sync([
      { name: "made", owner: "neondb_owner", id },
      { name: "neondb", owner: "neondb_owner", id: made.id },
      { name: "restored", owner: "neondb_owner", id: restored.id },
    ]);
    expect((await dbs()).map((d) => [d.id, d.name])).toEqual([
      [id, "made"],
      [made.id, "neondb"],
      [restored.id, "restored"],
    ]);
    await sync([{ name: "made", owner: "neondb_owner", id }]);
    expect((await dbs()).map((d) => d.id)).toEqual([id]);
  });

  it("does not take back what the API deleted, and a copy's databases keep the mark of the one they copy", async () => {
    expectStatus(
      await t.api("POST", `${b()}/databases`, { database: { name: "gone", owner_name: "neondb_owner" } }),
      201,
    );
    t.advance(5);
    const gone = (await dbs()).find((d) => d.name === "gone") as Db;
    expectStatus(await t.api("DELETE", `${b()}/databases/gone`), 200);
    t.advance(5);
    // The compute was stopped: its data still holds it until the next reconcile drops it.
    const [neondb] = await dbs();
    const server = [
      { name: "neondb", owner: "neondb_owner", id: (neondb as Db).id },
      { name: "gone", owner: "neondb_owner", id: gone.id },
    ];
    expect(await sync(server)).toEqual({ roles: [], databases: [] });
    expect((await dbs()).map((d) => d.name)).toEqual(["neondb"]);
    // A child's rows are found by the parent's marks its copied data carries, renamed or not.
    const child = await t.api("POST", `/api/v2/projects/${projectId}/branches`, { branch: { name: "copy" } });
    t.advance(5);
    const childBase = `/api/v2/projects/${projectId}/branches/${child.body.branch.id}`;
    expectStatus(
      await t.api("PATCH", `${childBase}/databases/neondb`, { database: { name: "renamed" } }),
      200,
    );
    t.advance(5);
    const taken = await syncServerCatalog(t.ctx, child.body.branch.id, {
      roles: await serverRoles(),
      databases: [{ name: "renamed", owner: "neondb_owner", id: (neondb as Db).id }],
    });
    expect(taken.databases).toEqual([]);
    expect((await dbs(childBase)).map((d) => d.name)).toEqual(["renamed"]);
  });

  it("leaves alone what an unfinished API change touches", async () => {
    const [neondb] = await dbs();
    const id = (neondb as Db).id;
    expectStatus(
      await t.api("POST", `${b()}/databases`, { database: { name: "api_made", owner_name: "neondb_owner" } }),
      201,
    );
    expectStatus(await t.api("PATCH", `${b()}/databases/neondb`, { database: { name: "api_renamed" } }), 200);
    // The compute does not have them yet: neither is taken back.
    await sync([{ name: "neondb", owner: "neondb_owner", id }]);
    expect((await dbs()).map((d) => d.name)).toEqual(["api_renamed", "api_made"]);
    // A database SQL renamed onto a name an unfinished change holds keeps its row all the same.
    expectStatus(
      await t.api("POST", `${b()}/databases`, { database: { name: "data2", owner_name: "neondb_owner" } }),
      201,
    );
    t.advance(5);
    const data2 = (await dbs()).find((d) => d.name === "data2") as Db;
    expectStatus(await t.api("PATCH", `${b()}/databases/api_renamed`, { database: { name: "bar" } }), 200);
    await sync([
      { name: "api_renamed", owner: "neondb_owner", id },
      { name: "api_made", owner: "neondb_owner", id: undefined },
      { name: "bar", owner: "neondb_owner", id: data2.id },
    ]);
    expect((await dbs()).map((d) => d.id)).toContain(data2.id);
  });

  it("a drop a reconcile read is cleared after it, unless the name was deleted again meanwhile", async () => {
    const branch = { id: branchId, projectId };
    t.ctx.db.transaction((tx) => recordDrop(tx, branch, "database", "x", 1));
    const read = t.ctx.db.transaction((tx) => listDrops(tx, branchId));
    // Made anew through the API and deleted again while the reconcile ran.
    t.ctx.db.transaction((tx) => recordDrop(tx, branch, "database", "x", 2));
    dropsApplied(t.ctx, branchId, read);
    expect(t.ctx.db.transaction((tx) => listDrops(tx, branchId)).databases).toEqual([
      { name: "x", origin: 2 },
    ]);
    dropsApplied(
      t.ctx,
      branchId,
      t.ctx.db.transaction((tx) => listDrops(tx, branchId)),
    );
    expect(t.ctx.db.transaction((tx) => listDrops(tx, branchId)).databases).toEqual([]);
  });

  it("does not take back what the API deleted, found by the mark it carries under any name", async () => {
    expectStatus(
      await t.api("POST", `${b()}/databases`, { database: { name: "x", owner_name: "neondb_owner" } }),
      201,
    );
    t.advance(5);
    const x = (await dbs()).find((d) => d.name === "x") as Db;
    // Renamed, then deleted, while the compute was stopped: its data still calls it x.
    expectStatus(await t.api("PATCH", `${b()}/databases/x`, { database: { name: "y" } }), 200);
    expectStatus(await t.api("DELETE", `${b()}/databases/y`), 200);
    t.advance(5);
    const [neondb] = await dbs();
    await sync([
      { name: "neondb", owner: "neondb_owner", id: (neondb as Db).id },
      { name: "x", owner: "neondb_owner", id: x.id },
    ]);
    expect((await dbs()).map((d) => d.name)).toEqual(["neondb"]);
  });
});

describe("connection_uri", () => {
  it("builds plain and pooled URIs, and 404s unknown roles and databases", async () => {
    const ep = (await t.api("GET", `/api/v2/projects/${projectId}/endpoints`)).body.endpoints[0];
    const pw = (await t.api("GET", `${b()}/roles/neondb_owner/reveal_password`)).body.password;
    const q = `/api/v2/projects/${projectId}/connection_uri?database_name=neondb&role_name=neondb_owner`;
    const plain = await t.api("GET", q);
    expectStatus(plain, 200);
    expect(plain.body.uri).toBe(`postgresql://neondb_owner:${pw}@${ep.host}/neondb?sslmode=require`);
    const pooled = await t.api("GET", `${q}&pooled=true&branch_id=${branchId}`);
    expect(pooled.body.uri).toContain(`@${ep.id}-pooler.`);
    expectStatus(
      await t.api("GET", `/api/v2/projects/${projectId}/connection_uri?database_name=neondb&role_name=ghost`),
      404,
    );
    expectStatus(
      await t.api("GET", `/api/v2/projects/${projectId}/connection_uri?role_name=neondb_owner`),
      400,
    );
  });
});

describe("store_passwords: false", () => {
  it("reveal_password answers 412 as the public API does; the role still works and can be reset", async () => {
    const made = await t.api("POST", "/api/v2/projects", { project: { store_passwords: false } });
    expectStatus(made, 201);
    expect(made.body.project.store_passwords).toBe(false);
    const base = `/api/v2/projects/${made.body.project.id}/branches/${made.body.branch.id}`;
    t.advance(1);
    const reveal = await t.api("GET", `${base}/roles/neondb_owner/reveal_password`);
    expectStatus(reveal, 412);
    expect(reveal.body).toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("store_passwords"),
    });
    expect(reveal.text).not.toContain(made.body.roles[0].password);
    expectStatus(await t.api("GET", `${base}/roles/nobody/reveal_password`), 404);
    const reset = await t.api("POST", `${base}/roles/neondb_owner/reset_password`);
    expectStatus(reset, 200);
    expect(reset.body.role.password).toEqual(expect.any(String));
  });
});
