import { afterEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

/**
 * Per-account limits (issue: bounded work): projects per account, branches and computes per
 * project, from the plan or NEON_EMULATOR_LIMITS; beyond them 422 with Neon's code, nothing written.
 */
let t: TestApp;
afterEach(() => t?.close());

const tables = (app: TestApp) => {
  const sqlite = (app.ctx.db as unknown as { $client: import("better-sqlite3").Database }).$client;
  const n = (table: string) =>
    (sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  return {
    projects: n("projects"),
    branches: n("branches"),
    endpoints: n("endpoints"),
    operations: n("operations"),
  };
};

describe("limits", () => {
  it("projects per account: 422 PROJECTS_LIMIT_EXCEEDED beyond; a deleted project frees its place; recovery counts", async () => {
    t = createTestApp({ config: { limits: { projects: 2 } } });
    const first = await t.api("POST", "/api/v2/projects", { project: { name: "one" } });
    expectStatus(first, 201);
    expectStatus(await t.api("POST", "/api/v2/projects", { project: { name: "two" } }), 201);
    const before = tables(t);
    const refused = await t.api("POST", "/api/v2/projects", { project: { name: "three" } });
    expectStatus(refused, 422);
    expect(refused.body).toMatchObject({
      code: "PROJECTS_LIMIT_EXCEEDED",
      message: "user projects limit of 2 exceeded, got 2",
    });
    expect(tables(t)).toEqual(before);
    expect((await t.api("GET", "/api/v2/users/me")).body.projects_limit).toBe(2);

    expectStatus(await t.api("DELETE", `/api/v2/projects/${first.body.project.id}`), 200);
    expectStatus(await t.api("POST", "/api/v2/projects", { project: { name: "three" } }), 201);
    const recover = await t.api("POST", `/api/v2/projects/${first.body.project.id}/recover`);
    expectStatus(recover, 422);
    expect(recover.body.code).toBe("PROJECTS_LIMIT_EXCEEDED");
  });

  it("branches per project: 422 BRANCHES_LIMIT_EXCEEDED beyond, with nothing of the branch or its endpoint written", async () => {
    t = createTestApp({ config: { limits: { branches: 3 } } });
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(p, 201);
    const projectId = p.body.project.id;
    expect(p.body.project.owner.branches_limit).toBe(3);
    for (const name of ["b1", "b2"]) {
      t.advance(5);
      expectStatus(await t.api("POST", `/api/v2/projects/${projectId}/branches`, { branch: { name } }), 201);
    }
    const before = tables(t);
    const refused = await t.api("POST", `/api/v2/projects/${projectId}/branches`, {
      branch: { name: "b3" },
      endpoints: [{ type: "read_write" }],
    });
    expectStatus(refused, 422);
    expect(refused.body).toMatchObject({
      code: "BRANCHES_LIMIT_EXCEEDED",
      message: "project branches limit of 3 exceeded, got 3",
    });
    expect(tables(t)).toEqual(before);
    expect((await t.api("GET", "/api/v2/users/me")).body.branches_limit).toBe(3);
  });

  it("computes per project: 422 ENDPOINTS_LIMIT_EXCEEDED beyond", async () => {
    t = createTestApp({ config: { limits: { computes: 2 } } });
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(p, 201);
    const projectId = p.body.project.id;
    const branchId = p.body.branch.id;
    t.advance(5);
    expectStatus(
      await t.api("POST", `/api/v2/projects/${projectId}/endpoints`, {
        endpoint: { branch_id: branchId, type: "read_only" },
      }),
      201,
    );
    const before = tables(t);
    const refused = await t.api("POST", `/api/v2/projects/${projectId}/endpoints`, {
      endpoint: { branch_id: branchId, type: "read_only" },
    });
    expectStatus(refused, 422);
    expect(refused.body).toMatchObject({
      code: "ENDPOINTS_LIMIT_EXCEEDED",
      message: "project endpoints limit of 2 exceeded, got 2",
    });
    // A branch made with an endpoint is refused whole.
    const withEndpoint = await t.api("POST", `/api/v2/projects/${projectId}/branches`, {
      branch: { name: "dev" },
      endpoints: [{ type: "read_write" }],
    });
    expectStatus(withEndpoint, 422);
    expect(tables(t)).toEqual(before);
  });

  it("computes per project: a deleted compute (or branch, or project) frees its place; the kept count is the project's computes", async () => {
    t = createTestApp({ config: { limits: { computes: 3 } } });
    const sqlite = (t.ctx.db as unknown as { $client: import("better-sqlite3").Database }).$client;
    const drift = () =>
      sqlite
        .prepare(
          `SELECT v.project_id, v.endpoints, (SELECT count(*) FROM endpoints e WHERE e.project_id = v.project_id) AS n
             FROM endpoint_versions v WHERE v.endpoints != n`,
        )
        .all();
    const p = await t.api("POST", "/api/v2/projects", { project: {} });
    const other = await t.api("POST", "/api/v2/projects", { project: {} });
    const projectId = p.body.project.id;
    t.advance(5);
    const ro = () =>
      t.api("POST", `/api/v2/projects/${projectId}/endpoints`, {
        endpoint: { branch_id: p.body.branch.id, type: "read_only" },
      });
    const second = await ro();
    expectStatus(second, 201);
    const dev = await t.api("POST", `/api/v2/projects/${projectId}/branches`, {
      branch: { name: "dev" },
      endpoints: [{ type: "read_write" }],
    });
    expectStatus(dev, 201);
    expectStatus(await ro(), 422);
    t.advance(5);
    expectStatus(
      await t.api("DELETE", `/api/v2/projects/${projectId}/endpoints/${second.body.endpoint.id}`),
      200,
    );
    expectStatus(await ro(), 201);
    expectStatus(await ro(), 422);
    t.advance(5);
    // A deleted branch takes its compute with it (a cascade the count follows).
    expectStatus(await t.api("DELETE", `/api/v2/projects/${projectId}/branches/${dev.body.branch.id}`), 200);
    t.advance(5);
    expectStatus(await ro(), 201);
    expect(drift()).toEqual([]);
    expectStatus(await t.api("DELETE", `/api/v2/projects/${other.body.project.id}`), 200);
    t.advance(10 * 86_400);
    expect(drift()).toEqual([]);
  });

  it("follow the plan by default: a free account has 20 projects, 10 branches a project", async () => {
    t = createTestApp({ plan: "free" });
    for (let i = 0; i < 20; i++) expectStatus(await t.api("POST", "/api/v2/projects", { project: {} }), 201);
    const refused = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(refused, 422);
    expect(refused.body.message).toBe("user projects limit of 20 exceeded, got 20");
    const me = await t.api("GET", "/api/v2/users/me");
    expect(me.body).toMatchObject({ projects_limit: 20, branches_limit: 10 });
  });
});
