import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { operations } from "../../src/control-plane/operations/table.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeEach(() => {
  t = createTestApp();
});
afterEach(() => t.close());

async function createProject(body: Record<string, unknown> = {}) {
  const res = await t.api("POST", "/api/v2/projects", { project: body });
  expectStatus(res, 201);
  return res.body;
}

describe("POST /projects", () => {
  it("creates the project with its main branch, owner role, database, read_write endpoint and operations", async () => {
    const body = await createProject({ name: "shop", region_id: "aws-eu-central-1", pg_version: 16 });
    expect(body.project).toMatchObject({
      name: "shop",
      region_id: "aws-eu-central-1",
      pg_version: 16,
      locked: false,
    });
    expect(body.project.id).toMatch(/^[a-z]+-[a-z]+-\d{6}$/);
    expect(body.branch).toMatchObject({ name: "main", default: true, project_id: body.project.id });
    expect(body.branch.id).toMatch(/^br-/);
    expect(body.endpoints).toHaveLength(1);
    expect(body.endpoints[0]).toMatchObject({
      type: "read_write",
      current_state: "init",
      pending_state: "active",
    });
    expect(body.endpoints[0].host).toBe(`${body.endpoints[0].id}.eu-central-1.aws.neon.tech`);
    expect(body.roles).toEqual([
      expect.objectContaining({ name: "neondb_owner", password: expect.any(String) }),
    ]);
    expect(body.databases).toEqual([expect.objectContaining({ name: "neondb", owner_name: "neondb_owner" })]);
    expect(body.operations.map((o: { action: string }) => o.action)).toEqual([
      "create_timeline",
      "start_compute",
    ]);
    const [uri] = body.connection_uris;
    expect(uri.connection_uri).toBe(
      `postgresql://neondb_owner:${body.roles[0].password}@${body.endpoints[0].host}/neondb?sslmode=require`,
    );
    expect(uri.connection_parameters.pooler_host).toBe(
      body.endpoints[0].host.replace(body.endpoints[0].id, `${body.endpoints[0].id}-pooler`),
    );
  });

  it("applies branch names, default endpoint settings and compute limits", async () => {
    const body = await createProject({
      branch: { name: "trunk", role_name: "app", database_name: "appdb" },
      default_endpoint_settings: {
        autoscaling_limit_min_cu: 0.5,
        autoscaling_limit_max_cu: 2,
        suspend_timeout_seconds: 600,
      },
    });
    expect(body.branch.name).toBe("trunk");
    expect(body.roles[0].name).toBe("app");
    expect(body.databases[0]).toMatchObject({ name: "appdb", owner_name: "app" });
    expect(body.endpoints[0]).toMatchObject({
      autoscaling_limit_min_cu: 0.5,
      autoscaling_limit_max_cu: 2,
      suspend_timeout_seconds: 600,
    });
  });

  it.each([
    [{ region_id: "mars-north-1" }, "region_id"],
    [{ pg_version: 13 }, "pg_version"],
    [{ pg_version: 19 }, "pg_version"],
    [{ name: 42 }, "name"],
    [{ default_endpoint_settings: { autoscaling_limit_min_cu: 0.3 } }, "autoscaling_limit_min_cu"],
    [{ default_endpoint_settings: { suspend_timeout_seconds: 604801 } }, "suspend_timeout_seconds"],
    [{ history_retention_seconds: -1 }, "history_retention_seconds"],
  ])("rejects %j with a 400 naming the field, creating nothing", async (project, field) => {
    const res = await t.api("POST", "/api/v2/projects", { project });
    expectStatus(res, 400);
    expect(res.body.message).toContain(field);
    const list = await t.api("GET", "/api/v2/projects");
    expect(list.body.projects).toHaveLength(0);
  });

  it("rejects a missing project object", async () => {
    const res = await t.api("POST", "/api/v2/projects", {});
    expectStatus(res, 400);
    expect(res.body.message).toContain("project");
  });

  it("refuses a NUL character in a project's, branch's, endpoint's, key's or snapshot's name (400), writing nothing", async () => {
    const nul = "a\u0000b";
    const refused = async (method: string, path: string, body: unknown, field: string) => {
      const res = await t.api(method, path, body);
      expectStatus(res, 400);
      expect(res.body.message).toContain(field);
      expect(res.body.message).toContain("must not contain NUL characters");
    };
    const projects = () => t.api("GET", "/api/v2/projects");
    const before = (await projects()).body.projects.length;
    await refused("POST", "/api/v2/projects", { project: { name: nul } }, "name");
    await refused("POST", "/api/v2/projects", { project: { branch: { name: nul } } }, "name");
    expect((await projects()).body.projects.length).toBe(before);
    const made = await createProject({ name: "plain" });
    const id = made.project.id as string;
    const branch = `/api/v2/projects/${id}/branches/${made.branch.id}`;
    await refused("PATCH", `/api/v2/projects/${id}`, { project: { name: nul } }, "name");
    await refused("POST", `/api/v2/projects/${id}/branches`, { branch: { name: nul } }, "name");
    await refused("PATCH", branch, { branch: { name: nul } }, "name");
    await refused(
      "PATCH",
      `/api/v2/projects/${id}/endpoints/${made.endpoints[0].id}`,
      { endpoint: { name: nul } },
      "name",
    );
    await refused("POST", "/api/v2/api_keys", { key_name: nul }, "key_name");
    await refused("POST", `${branch}/snapshot?name=${encodeURIComponent(nul)}`, {}, "name");
    expect((await t.api("GET", `/api/v2/projects/${id}`)).body.project.name).toBe("plain");
    expect((await t.api("GET", branch)).body.branch.name).toBe(made.branch.name);
    expect((await t.api("GET", `/api/v2/projects/${id}/branches`)).body.branches).toHaveLength(1);
  });

  it("refuses an empty project or endpoint name (400, minLength 1 in Neon's document), writing nothing", async () => {
    const made = await createProject({ name: "plain" });
    const id = made.project.id as string;
    const empty = async (method: string, path: string, body: unknown) => {
      const res = await t.api(method, path, body);
      expectStatus(res, 400);
      expect(res.body.message).toMatch(/name: Too small: expected string to have >=1 characters/);
    };
    await empty("POST", "/api/v2/projects", { project: { name: "" } });
    expect((await t.api("GET", "/api/v2/projects")).body.projects).toHaveLength(1);
    const endpoint = `/api/v2/projects/${id}/endpoints/${made.endpoints[0].id}`;
    await empty("PATCH", endpoint, { endpoint: { name: "" } });
    await empty("POST", `/api/v2/projects/${id}/endpoints`, {
      endpoint: { branch_id: made.branch.id, type: "read_only", name: "" },
    });
    expect((await t.api("GET", endpoint)).body.endpoint.name).toBe(made.endpoints[0].name);
    expect((await t.api("GET", `/api/v2/projects/${id}/endpoints`)).body.endpoints).toHaveLength(1);
  });
});

describe("GET /projects", () => {
  it("lists every spec field with its type, plus applications and integrations maps", async () => {
    await createProject({ name: "a" });
    const res = await t.api("GET", "/api/v2/projects");
    expectStatus(res, 200);
    const [p] = res.body.projects;
    for (const [k, type] of Object.entries({
      id: "string",
      name: "string",
      cpu_used_sec: "number",
      platform_id: "string",
      region_id: "string",
      provisioner: "string",
      pg_version: "number",
      locked: "boolean",
      created_at: "string",
      updated_at: "string",
      proxy_host: "string",
      branch_logical_size_limit: "number",
    }))
      expect(typeof p[k], k).toBe(type);
    expect(res.body.applications).toEqual({});
    expect(res.body.integrations).toEqual({});
  });

  it("pages with limit and cursor, walking every project exactly once", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await createProject({ name: `p${i}` })).project.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const res = await t.api("GET", `/api/v2/projects?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expectStatus(res, 200);
      seen.push(...res.body.projects.map((p: { id: string }) => p.id));
      cursor = res.body.pagination?.cursor;
      if (!cursor) break;
    }
    expect(seen.sort()).toEqual([...ids].sort());
    expect(new Set(seen).size).toBe(7);
  });

  it("searches by partial name or id and filters by org_id", async () => {
    const a = await createProject({ name: "alpha-store" });
    await createProject({ name: "beta" });
    const byName = await t.api("GET", "/api/v2/projects?search=pha-st");
    expect(byName.body.projects.map((p: { id: string }) => p.id)).toEqual([a.project.id]);
    const byId = await t.api("GET", `/api/v2/projects?search=${a.project.id.slice(0, 8)}`);
    expect(byId.body.projects.map((p: { id: string }) => p.id)).toContain(a.project.id);
    const wildcard = await t.api("GET", "/api/v2/projects?search=%25");
    expect(wildcard.body.projects).toHaveLength(0);
    const org = a.project.org_id;
    expect((await t.api("GET", `/api/v2/projects?org_id=${org}`)).body.projects).toHaveLength(2);
    expect((await t.api("GET", "/api/v2/projects?org_id=org-other-1")).body.projects).toHaveLength(0);
  });

  it.each(["limit=0", "limit=401", "limit=abc", "cursor=unknown-project"])(
    "rejects %s with 400",
    async (q) => {
      expectStatus(await t.api("GET", `/api/v2/projects?${q}`), 400);
    },
  );

  it("serves an empty shared list, and checks its query", async () => {
    const res = await t.api("GET", "/api/v2/projects/shared?limit=5");
    expectStatus(res, 200);
    expect(res.body.projects).toEqual([]);
    const bad = await t.api("GET", "/api/v2/projects/shared?limit=0");
    expectStatus(bad, 400);
    expect(bad.body.message).toContain("limit");
  });
});

describe("GET, PATCH, DELETE /projects/{id}", () => {
  it("gets a project and 404s unknown and other-account ids", async () => {
    const { project } = await createProject();
    const res = await t.api("GET", `/api/v2/projects/${project.id}`);
    expectStatus(res, 200);
    expect(res.body.project).toMatchObject({ id: project.id, owner_id: t.accountId });
    expect(res.body.project.owner).toMatchObject({ email: expect.any(String) });
    expectStatus(await t.api("GET", "/api/v2/projects/no-such-project"), 404);
    const other = await t.api("POST", "/_emulator/accounts", {});
    const foreign = await t.request("GET", `/api/v2/projects/${project.id}`, undefined, {
      authorization: `Bearer ${other.body.key.key}`,
    });
    expectStatus(foreign, 404);
  });

  it("shows Neon's default settings until they are set; what is set shows over them, in the list too", async () => {
    const { project } = await createProject({ settings: { allowed_ips: { ips: ["10.0.0.1"] } } });
    expect(project.settings).toEqual({
      // A list set without protected_branches_only shows it false.
      allowed_ips: { ips: ["10.0.0.1"], protected_branches_only: false },
      enable_logical_replication: false,
      maintenance_window: { weekdays: [5], start_time: "19:00", end_time: "20:00" },
      block_public_connections: false,
      block_vpc_connections: false,
      hipaa: false,
    });
    const on = await t.api("PATCH", `/api/v2/projects/${project.id}`, {
      project: { settings: { enable_logical_replication: true } },
    });
    expectStatus(on, 200);
    // Its endpoint was still starting: turning logical replication on suspends it.
    expect(on.body.operations.map((o: { action: string }) => o.action)).toEqual(["suspend_compute"]);
    const listed = (await t.api("GET", "/api/v2/projects")).body.projects[0];
    expect(listed.settings).toMatchObject({
      enable_logical_replication: true,
      allowed_ips: { ips: ["10.0.0.1"] },
      hipaa: false,
    });
    const off = await t.api("PATCH", `/api/v2/projects/${project.id}`, {
      project: { settings: { enable_logical_replication: false } },
    });
    expectStatus(off, 400);
    expect(off.body.message).toBe("logical replication cannot be disabled once it has been enabled");
  });

  it("renames without operations; a history retention change starts apply_storage_config", async () => {
    const { project } = await createProject();
    const renamed = await t.api("PATCH", `/api/v2/projects/${project.id}`, { project: { name: "renamed" } });
    expectStatus(renamed, 200);
    expect(renamed.body.project.name).toBe("renamed");
    expect(renamed.body.operations).toEqual([]);
    const retention = await t.api("PATCH", `/api/v2/projects/${project.id}`, {
      project: { history_retention_seconds: 3600 },
    });
    expectStatus(retention, 200);
    expect(retention.body.project.history_retention_seconds).toBe(3600);
    expect(retention.body.operations.map((o: { action: string }) => o.action)).toEqual([
      "apply_storage_config",
    ]);
    expect((await t.api("GET", `/api/v2/projects/${project.id}`)).body.project.name).toBe("renamed");
  });

  it("deletes the project and everything in it; its delete_tenant runs when the recovery window closes", async () => {
    const created = await createProject();
    const id = created.project.id;
    const res = await t.api("DELETE", `/api/v2/projects/${id}`);
    expectStatus(res, 200);
    expect(res.body.project.id).toBe(id);
    expectStatus(await t.api("GET", `/api/v2/projects/${id}`), 404);
    expectStatus(await t.api("GET", `/api/v2/projects/${id}/branches/${created.branch.id}`), 404);
    expectStatus(await t.api("GET", `/api/v2/projects/${id}/endpoints/${created.endpoints[0].id}`), 404);
    expectStatus(await t.api("GET", `/api/v2/projects/${id}/operations`), 404);
    expectStatus(await t.api("DELETE", `/api/v2/projects/${id}`), 404);
    expect((await t.api("GET", "/api/v2/projects")).body.projects).toEqual([]);
    const ops = t.ctx.db.select().from(operations).all();
    expect(ops.map((o) => o.action)).toEqual(["delete_tenant"]);
    t.advance(7 * 86400 - 60);
    expect(t.ctx.db.select().from(operations).all()[0]?.status).toBe("running");
    expect((await t.api("GET", "/api/v2/projects?recoverable=true")).body.projects).toHaveLength(1);
    t.advance(120);
    expect(t.ctx.db.select().from(operations).all()[0]?.status).toBe("finished");
    expect((await t.api("GET", "/api/v2/projects?recoverable=true")).body.projects).toEqual([]);
    const late = await t.api("POST", `/api/v2/projects/${id}/recover`);
    expectStatus(late, 404);
    expect(late.body.message).toBe(`project ${id} not found`);
  });
});

describe("project recovery", () => {
  it("lists a deleted project as recoverable for 7 days and brings it back whole", async () => {
    const created = await createProject({ name: "gone" });
    const id = created.project.id;
    const child = await t.api("POST", `/api/v2/projects/${id}/branches`, { branch: { name: "dev" } });
    expectStatus(child, 201);
    t.advance(5);
    const role = await t.api("POST", `/api/v2/projects/${id}/branches/${created.branch.id}/roles`, {
      role: { name: "app" },
    });
    expectStatus(role, 201);
    t.advance(5);
    const deletedAt = t.clock.now();
    expectStatus(await t.api("DELETE", `/api/v2/projects/${id}`), 200);

    const listed = await t.api("GET", "/api/v2/projects?recoverable=true");
    expectStatus(listed, 200);
    expect(listed.body.projects).toEqual([
      expect.objectContaining({
        id,
        name: "gone",
        deleted_at: new Date(deletedAt).toISOString().replace(".000Z", "Z"),
        recoverable_until: new Date(deletedAt + 7 * 86400_000).toISOString().replace(".000Z", "Z"),
      }),
    ]);
    expect((await t.api("GET", "/api/v2/projects")).body.projects).toEqual([]);

    t.advance(3 * 86400);
    const recovered = await t.api("POST", `/api/v2/projects/${id}/recover`);
    expectStatus(recovered, 200);
    expect(recovered.body.project).toMatchObject({ id, name: "gone" });
    expect(recovered.body.branches.map((b: { name: string }) => b.name).sort()).toEqual(["dev", "main"]);

    // Everything a follow-up request sees is back; the computes are stopped, not gone.
    expectStatus(await t.api("GET", `/api/v2/projects/${id}`), 200);
    const roles = await t.api("GET", `/api/v2/projects/${id}/branches/${created.branch.id}/roles`);
    expect(roles.body.roles.map((r: { name: string }) => r.name).sort()).toEqual(["app", "neondb_owner"]);
    const endpoints = await t.api("GET", `/api/v2/projects/${id}/endpoints`);
    expect(endpoints.body.endpoints).toEqual([
      expect.objectContaining({ id: created.endpoints[0].id, current_state: "idle" }),
    ]);
    const uri = await t.api(
      "GET",
      `/api/v2/projects/${id}/connection_uri?database_name=neondb&role_name=neondb_owner`,
    );
    expectStatus(uri, 200);
    expect((await t.api("GET", "/api/v2/projects?recoverable=true")).body.projects).toEqual([]);
    // The pending deletion is gone: a long advance leaves the project alone.
    t.advance(30 * 86400);
    expectStatus(await t.api("GET", `/api/v2/projects/${id}`), 200);
    const start = await t.api("POST", `/api/v2/projects/${id}/endpoints/${created.endpoints[0].id}/start`);
    expectStatus(start, 200);
  });

  it("refuses to recover a live project, an unknown one and another account's", async () => {
    const live = await createProject();
    const again = await t.api("POST", `/api/v2/projects/${live.project.id}/recover`);
    expectStatus(again, 409);
    expect(again.body.message).toContain("is not deleted");
    expectStatus(await t.api("POST", "/api/v2/projects/no-such-project-123/recover"), 404);
    expectStatus(await t.api("DELETE", `/api/v2/projects/${live.project.id}`), 200);
    const made = await t.api("POST", "/_emulator/accounts", {});
    expectStatus(made, 201);
    const other = { authorization: `Bearer ${made.body.key.key}` };
    expectStatus(
      await t.request("POST", `/api/v2/projects/${live.project.id}/recover`, undefined, other),
      404,
    );
    const theirs = await t.request("GET", "/api/v2/projects?recoverable=true", undefined, other);
    expect(theirs.body.projects).toEqual([]);
    expectStatus(await t.api("POST", `/api/v2/projects/${live.project.id}/recover`), 200);
  });
});

describe("account views", () => {
  it("serves users/me, organizations, auth and regions", async () => {
    const me = await t.api("GET", "/api/v2/users/me");
    expectStatus(me, 200);
    expect(me.body).toMatchObject({ id: t.accountId, email: expect.any(String), plan: expect.any(String) });
    const orgs = await t.api("GET", "/api/v2/users/me/organizations");
    expect(orgs.body.organizations).toHaveLength(1);
    const org = await t.api("GET", `/api/v2/organizations/${orgs.body.organizations[0].id}`);
    expectStatus(org, 200);
    expect(org.body).toEqual(orgs.body.organizations[0]);
    expectStatus(await t.api("GET", "/api/v2/organizations/org-someone-else-12345678"), 404);
    expectStatus(await t.api("GET", "/api/v2/organizations/Not_An_Id"), 400);
    const auth = await t.api("GET", "/api/v2/auth");
    expect(auth.body).toMatchObject({
      auth_method: "api_key_org",
      account_id: orgs.body.organizations[0].id,
    });
    const regions = await t.api("GET", "/api/v2/regions");
    expect(regions.body.regions.filter((r: { default: boolean }) => r.default)).toHaveLength(1);
  });
});

describe("size caps on free-form fields", () => {
  it("settings up to 64 KiB as JSON, maps up to 100 entries of 128/4096 characters; beyond, a 400 naming the field", async () => {
    t.close();
    t = createTestApp({ config: { maxBodyBytes: 1024 * 1024 } }); // the default limit is the emulator's
    const big = { note: "x".repeat(70 * 1024) };
    const refused = await t.api("POST", "/api/v2/projects", { project: { settings: big } });
    expectStatus(refused, 400);
    expect(refused.body.message).toContain("settings");
    expect(refused.body.message).toContain("65536 bytes");
    expectStatus(
      await t.api("POST", "/api/v2/projects", { project: { settings: { note: "x".repeat(60 * 1024) } } }),
      201,
    );

    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`setting_${i}`, "1"]));
    const tooMany = await t.api("POST", "/api/v2/projects", {
      project: { default_endpoint_settings: { pg_settings: many } },
    });
    expectStatus(tooMany, 400);
    expect(tooMany.body.message).toContain("pg_settings");
    const project = await createProject();
    const longValue = await t.api(
      "PATCH",
      `/api/v2/projects/${project.project.id}/endpoints/${project.endpoints[0].id}`,
      {
        endpoint: { settings: { pg_settings: { work_mem: "9".repeat(5000) } } },
      },
    );
    expectStatus(longValue, 400);
    expect(longValue.body.message).toContain("at most 4096 characters");
    const annotation = await t.api("POST", `/api/v2/projects/${project.project.id}/branches`, {
      branch: { name: "annotated" },
      annotation_value: { ["k".repeat(129)]: "v" },
    });
    expectStatus(annotation, 400);
    expect(annotation.body.message).toContain("at most 128 characters");
    // Nothing was made by the refused requests.
    const listed = await t.api("GET", "/api/v2/projects");
    expect(listed.body.projects).toHaveLength(2);
  });
});
