import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { apiKeys } from "../../src/control-plane/api-keys/table.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let orgId: string;
beforeEach(async () => {
  t = createTestApp();
  orgId = (await t.api("GET", "/api/v2/users/me/organizations")).body.organizations[0].id;
});
afterEach(() => t.close());

const as = (key: string, method: string, path: string, body?: unknown) =>
  t.request(method, path, body, { authorization: `Bearer ${key}` });

async function project(name: string): Promise<string> {
  const res = await t.api("POST", "/api/v2/projects", { project: { name } });
  expectStatus(res, 201);
  return res.body.project.id;
}

describe("organization API keys", () => {
  it("are created once with their secret, listed apart from personal keys, and revoked at once", async () => {
    const created = await t.api("POST", `/api/v2/organizations/${orgId}/api_keys`, { key_name: "ci" });
    expectStatus(created, 200);
    expect(created.body.key).toMatch(/^[a-z0-9]{64}$/);
    expect(created.body).toMatchObject({ name: "ci", created_by: t.accountId });
    expect(created.body).not.toHaveProperty("project_id");
    expect(JSON.stringify(t.ctx.db.select().from(apiKeys).all())).not.toContain(created.body.key);

    const orgList = await t.api("GET", `/api/v2/organizations/${orgId}/api_keys`);
    expectStatus(orgList, 200);
    expect(orgList.body.map((k: { name: string }) => k.name)).toEqual(["ci"]);
    expect(JSON.stringify(orgList.body)).not.toContain(created.body.key);
    const personal = await t.api("GET", "/api/v2/api_keys");
    expect(personal.body.map((k: { name: string }) => k.name)).toEqual(["test"]);

    // The new key works, on the same account's objects.
    expectStatus(await as(created.body.key, "GET", "/api/v2/projects"), 200);
    // Each family is revoked through its own route.
    expectStatus(await t.api("DELETE", `/api/v2/api_keys/${created.body.id}`), 404);
    const revoked = await t.api("DELETE", `/api/v2/organizations/${orgId}/api_keys/${created.body.id}`);
    expectStatus(revoked, 200);
    expect(revoked.body).toMatchObject({ id: created.body.id, name: "ci", revoked: true });
    const after = await as(created.body.key, "GET", "/api/v2/projects");
    expectStatus(after, 401);
    expect((await t.api("GET", `/api/v2/organizations/${orgId}/api_keys`)).body).toEqual([]);
  });

  it("answer 404 for another organization, 400 for a malformed id or body", async () => {
    expectStatus(await t.api("GET", "/api/v2/organizations/org-other-123/api_keys"), 404);
    expectStatus(await t.api("POST", "/api/v2/organizations/org-other-123/api_keys", { key_name: "x" }), 404);
    expectStatus(await t.api("GET", "/api/v2/organizations/BAD_ID/api_keys"), 400);
    const noName = await t.api("POST", `/api/v2/organizations/${orgId}/api_keys`, {});
    expectStatus(noName, 400);
    expect(noName.body.message).toContain("key_name");
    const badProject = await t.api("POST", `/api/v2/organizations/${orgId}/api_keys`, {
      key_name: "x",
      project_id: "no such project",
    });
    expectStatus(badProject, 400);
    expectStatus(await t.api("DELETE", `/api/v2/organizations/${orgId}/api_keys/999`), 404);
    expect((await t.api("GET", `/api/v2/organizations/${orgId}/api_keys`)).body).toEqual([]);
  });
});

describe("project-scoped keys", () => {
  it("see only their project, cannot create or delete projects or act on the organization", async () => {
    const mine = await project("mine");
    const other = await project("other");
    expectStatus(
      await t.api("POST", `/api/v2/organizations/${orgId}/api_keys`, { key_name: "x", project_id: "gone-1" }),
      404,
    );
    const created = await t.api("POST", `/api/v2/organizations/${orgId}/api_keys`, {
      key_name: "scoped",
      project_id: mine,
    });
    expectStatus(created, 200);
    expect(created.body.project_id).toBe(mine);
    const list = await t.api("GET", `/api/v2/organizations/${orgId}/api_keys`);
    expect(list.body[0]).toMatchObject({ name: "scoped", project_id: mine });
    const key = created.body.key as string;

    // Its project, and everything below it, works.
    expectStatus(await as(key, "GET", `/api/v2/projects/${mine}`), 200);
    const branch = await as(key, "POST", `/api/v2/projects/${mine}/branches`, { branch: { name: "dev" } });
    expectStatus(branch, 201);
    const listed = await as(key, "GET", "/api/v2/projects");
    expectStatus(listed, 200);
    expect(listed.body.projects.map((p: { id: string }) => p.id)).toEqual([mine]);
    expect((await as(key, "GET", "/api/v2/projects?search=other")).body.projects).toEqual([]);
    expectStatus(await as(key, "GET", "/api/v2/users/me"), 200);

    // Another project is not found; account-wide actions are refused with the public error body.
    const hidden = await as(key, "GET", `/api/v2/projects/${other}/branches`);
    expectStatus(hidden, 404);
    expect(hidden.body.message).toContain(other);
    for (const [method, path, body] of [
      ["POST", "/api/v2/projects", { project: { name: "more" } }],
      ["DELETE", `/api/v2/projects/${mine}`, undefined],
      ["GET", `/api/v2/organizations/${orgId}`, undefined],
      ["GET", `/api/v2/organizations/${orgId}/api_keys`, undefined],
      ["POST", "/api/v2/api_keys", { key_name: "escalate" }],
      ["POST", "/_emulator/reset", {}],
      ["POST", `/api/v2/projects/${mine}/transfer_requests`, {}],
    ] as const) {
      const res = await as(key, method, path, body);
      expectStatus(res, 403);
      expect(res.body).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining(mine) });
    }
    expect((await t.api("GET", "/api/v2/projects")).body.projects).toHaveLength(2);

    // The key dies with its project.
    expectStatus(await t.api("DELETE", `/api/v2/projects/${mine}`), 200);
    const dead = await as(key, "GET", "/api/v2/projects");
    expectStatus(dead, 401);
    expect((await t.api("GET", `/api/v2/organizations/${orgId}/api_keys`)).body).toEqual([]);
  });
});
