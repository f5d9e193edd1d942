import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeEach(() => {
  t = createTestApp();
});
afterEach(() => t.close());

describe("isolated accounts", () => {
  it("creates an empty account whose key sees only its own objects", async () => {
    const mine = await t.api("POST", "/api/v2/projects", { project: { name: "mine" } });
    const created = await t.api("POST", "/_emulator/accounts", { name: "Suite B", plan: "free" });
    expectStatus(created, 201);
    expect(created.body.key.key).toMatch(/^[a-z0-9]{64}$/);
    expect(created.body.account).toMatchObject({ name: "Suite B", plan: "free" });
    const other = { authorization: `Bearer ${created.body.key.key}` };
    const list = await t.request("GET", "/api/v2/projects", undefined, other);
    expect(list.body.projects).toEqual([]);
    const pid = mine.body.project.id;
    for (const path of [
      `/api/v2/projects/${pid}`,
      `/api/v2/projects/${pid}/branches`,
      `/api/v2/projects/${pid}/endpoints`,
      `/api/v2/projects/${pid}/operations`,
      `/api/v2/projects/${pid}/endpoints/${mine.body.endpoints[0].id}`,
    ])
      expectStatus(await t.request("GET", path, undefined, other), 404);
    expectStatus(await t.request("DELETE", `/api/v2/projects/${pid}`, undefined, other), 404);
    const keys = await t.request("GET", "/api/v2/api_keys", undefined, other);
    expect(keys.body).toHaveLength(1);
    expect(keys.body[0].created_by).toEqual({ id: created.body.account.id, name: "Suite B", image: "" });
    expect((await t.api("GET", "/api/v2/api_keys")).body).toHaveLength(1);
    const theirs = await t.request("POST", "/api/v2/projects", { project: {} }, other);
    expectStatus(theirs, 201);
    expect((await t.api("GET", "/api/v2/projects")).body.projects).toHaveLength(1);
  });

  it("shows the account's user as the creator of its branches, in every answer that holds one", async () => {
    const created = await t.api("POST", "/_emulator/accounts", { name: "Suite B" });
    const as_ = (method: string, path: string, body?: unknown) =>
      t.request(method, path, body, { authorization: `Bearer ${created.body.key.key}` });
    const as = (method: string, path: string, body?: unknown) => as_(method, `/api/v2${path}`, body);
    const byB = { name: "Suite B", image: "" };
    const project = await as("POST", "/projects", { project: {} });
    expect(project.body.branch.created_by).toEqual(byB);
    const pid = project.body.project.id;
    const main = project.body.branch.id;
    const child = await as("POST", `/projects/${pid}/branches`, { branch: { name: "child" } });
    expect(child.body.branch.created_by).toEqual(byB);
    const cid = child.body.branch.id;
    const advance = async () =>
      expectStatus(await as_("POST", "/_emulator/clock/advance", { seconds: 60 }), 200);
    await advance();
    const list = await as("GET", `/projects/${pid}/branches`);
    expect(list.body.branches.map((b: { created_by: unknown }) => b.created_by)).toEqual([byB, byB]);
    expect((await as("GET", `/projects/${pid}/branches/${cid}`)).body.branch.created_by).toEqual(byB);
    expect(
      (await as("PATCH", `/projects/${pid}/branches/${cid}`, { branch: { name: "c2" } })).body.branch
        .created_by,
    ).toEqual(byB);
    const reset = await as("POST", `/projects/${pid}/branches/${cid}/restore`, { source_branch_id: main });
    expect(reset.body.branch.created_by).toEqual(byB);
    await advance();
    expect(
      (await as("POST", `/projects/${pid}/branches/${cid}/set_as_default`)).body.branch.created_by,
    ).toEqual(byB);
    expect(
      (await as("POST", `/projects/${pid}/branches/${main}/set_as_default`)).body.branch.created_by,
    ).toEqual(byB);
    expect((await as("DELETE", `/projects/${pid}/branches/${cid}`)).body.branch.created_by).toEqual(byB);
    // The default account's user is still its own.
    const mine = await t.api("POST", "/api/v2/projects", { project: {} });
    expect(mine.body.branch.created_by).toEqual({ name: "Emulator User", image: "" });
  });

  it("validates the request", async () => {
    expectStatus(await t.api("POST", "/_emulator/accounts", { plan: "gold" }), 400);
    expectStatus(await t.api("POST", "/_emulator/accounts", { email: "not-an-email" }), 400);
  });
});

describe("reset", () => {
  it("empties the caller's account, keeps keys unless asked, and leaves other accounts alone", async () => {
    const other = await t.api("POST", "/_emulator/accounts", {});
    const otherAuth = { authorization: `Bearer ${other.body.key.key}` };
    await t.request("POST", "/api/v2/projects", { project: {} }, otherAuth);
    await t.api("POST", "/api/v2/projects", { project: {} });
    await t.api("POST", "/api/v2/projects", { project: {} });
    // A deleted project still recoverable goes for good too, and is counted.
    const gone = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(await t.api("DELETE", `/api/v2/projects/${gone.body.project.id}`), 200);
    const second = await t.api("POST", "/api/v2/api_keys", { key_name: "second" });
    await t.api("POST", "/_emulator/faults", { action: "start_compute" });
    const res = await t.request("POST", "/_emulator/reset", undefined, { authorization: `Bearer ${t.key}` });
    expectStatus(res, 200);
    expect(res.body).toEqual({ deleted_projects: 3, revoked_keys: 0 });
    expectStatus(await t.api("POST", `/api/v2/projects/${gone.body.project.id}/recover`), 404);
    expect((await t.api("GET", "/api/v2/projects")).body.projects).toEqual([]);
    expect((await t.api("GET", "/_emulator/faults")).body.faults).toEqual([]);
    expectStatus(
      await t.request("GET", "/api/v2/projects", undefined, { authorization: `Bearer ${second.body.key}` }),
      200,
    );
    expect((await t.request("GET", "/api/v2/projects", undefined, otherAuth)).body.projects).toHaveLength(1);
    const revoking = await t.api("POST", "/_emulator/reset", { revoke_other_keys: true });
    expect(revoking.body.revoked_keys).toBe(1);
    expectStatus(
      await t.request("GET", "/api/v2/projects", undefined, { authorization: `Bearer ${second.body.key}` }),
      401,
    );
    expectStatus(await t.api("GET", "/api/v2/projects"), 200);
  });
});
