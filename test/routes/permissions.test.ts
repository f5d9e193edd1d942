import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let bob: { key: string };
beforeEach(async () => {
  t = createTestApp();
  const created = await t.api("POST", "/api/v2/projects", { project: { name: "shared one" } });
  expectStatus(created, 201);
  projectId = created.body.project.id;
  const made = await t.api("POST", "/_emulator/accounts", { name: "Bob", email: "bob@example.com" });
  expectStatus(made, 201);
  bob = { key: made.body.key.key };
});
afterEach(() => t.close());

const asBob = (method: string, path: string, body?: unknown) =>
  t.request(method, path, body, { authorization: `Bearer ${bob.key}` });

describe("project permissions (sharing)", () => {
  it("a grant shows the project in the collaborator's /projects/shared; the collaborator works on it but cannot delete it; revoking ends it at once", async () => {
    expect((await asBob("GET", "/api/v2/projects/shared")).body.projects).toEqual([]);
    expectStatus(await asBob("GET", `/api/v2/projects/${projectId}`), 404);

    const grant = await t.api("POST", `/api/v2/projects/${projectId}/permissions`, {
      email: "bob@example.com",
    });
    expectStatus(grant, 200);
    expect(grant.body).toEqual({
      id: expect.any(String),
      granted_to_email: "bob@example.com",
      granted_at: expect.any(String),
    });
    // Granting again answers the same grant.
    const again = await t.api("POST", `/api/v2/projects/${projectId}/permissions`, {
      email: "bob@example.com",
    });
    expect(again.body.id).toBe(grant.body.id);
    expect((await t.api("GET", `/api/v2/projects/${projectId}/permissions`)).body).toEqual({
      project_permissions: [grant.body],
    });

    const shared = await asBob("GET", "/api/v2/projects/shared");
    expectStatus(shared, 200);
    expect(shared.body.projects.map((p: { id: string }) => p.id)).toEqual([projectId]);
    expect((await asBob("GET", "/api/v2/projects/shared?search=nomatch")).body.projects).toEqual([]);
    expect((await asBob("GET", "/api/v2/projects")).body.projects).toEqual([]); // not Bob's own

    // Bob acts on it as a collaborator: read, branch, rename, share further.
    expectStatus(await asBob("GET", `/api/v2/projects/${projectId}`), 200);
    const branch = await asBob("POST", `/api/v2/projects/${projectId}/branches`, {
      branch: { name: "bob-dev" },
    });
    expectStatus(branch, 201);
    expectStatus(
      await asBob("PATCH", `/api/v2/projects/${projectId}`, { project: { name: "renamed by bob" } }),
      200,
    );
    expect((await t.api("GET", `/api/v2/projects/${projectId}`)).body.project.name).toBe("renamed by bob");
    expectStatus(await asBob("GET", `/api/v2/projects/${projectId}/permissions`), 200);
    // Nor can a collaborator offer it to someone (themselves included).
    const offer = await asBob("POST", `/api/v2/projects/${projectId}/transfer_requests`, {});
    expectStatus(offer, 403);
    const refused = await asBob("DELETE", `/api/v2/projects/${projectId}`);
    expectStatus(refused, 403);
    expect(refused.body.code).toBe("FORBIDDEN");
    expectStatus(await t.api("GET", `/api/v2/projects/${projectId}`), 200);

    const revoked = await t.api("DELETE", `/api/v2/projects/${projectId}/permissions/${grant.body.id}`);
    expectStatus(revoked, 200);
    expect(revoked.body).toMatchObject({ id: grant.body.id, revoked_at: expect.any(String) });
    expectStatus(await asBob("GET", `/api/v2/projects/${projectId}`), 404);
    expect((await asBob("GET", "/api/v2/projects/shared")).body.projects).toEqual([]);
    expect(
      (await t.api("GET", `/api/v2/projects/${projectId}/permissions`)).body.project_permissions,
    ).toEqual([]);
  });

  it("answers 400 for a bad email or the owner's own, 404 for unknown permissions and others' projects", async () => {
    expectStatus(await t.api("POST", `/api/v2/projects/${projectId}/permissions`, { email: "nope" }), 400);
    expectStatus(
      await t.api("POST", `/api/v2/projects/${projectId}/permissions`, { email: "user@example.com" }),
      400,
    );
    expectStatus(await t.api("DELETE", `/api/v2/projects/${projectId}/permissions/unknown`), 404);
    expectStatus(
      await asBob("POST", `/api/v2/projects/${projectId}/permissions`, { email: "bob@example.com" }),
      404,
    );
    expectStatus(await asBob("GET", `/api/v2/projects/${projectId}/permissions`), 404);
    expect(
      (await t.api("GET", `/api/v2/projects/${projectId}/permissions`)).body.project_permissions,
    ).toEqual([]);
  });

  it("a collaborator may accept the owner's transfer request, as itself", async () => {
    expectStatus(
      await t.api("POST", `/api/v2/projects/${projectId}/permissions`, { email: "bob@example.com" }),
      200,
    );
    const offer = await t.api("POST", `/api/v2/projects/${projectId}/transfer_requests`, {});
    expectStatus(offer, 201);
    expectStatus(
      await asBob("PUT", `/api/v2/projects/${projectId}/transfer_requests/${offer.body.id}`, {}),
      204,
    );
    expect((await asBob("GET", "/api/v2/projects")).body.projects.map((p: { id: string }) => p.id)).toEqual([
      projectId,
    ]);
    expectStatus(await t.api("GET", `/api/v2/projects/${projectId}`), 404);
  });

  it("access is bound to the account that had the email when it was granted", async () => {
    expectStatus(
      await t.api("POST", `/api/v2/projects/${projectId}/permissions`, { email: "bob@example.com" }),
      200,
    );
    // Emails are not unique here: a later account with Bob's email gains nothing.
    const later = await t.api("POST", "/_emulator/accounts", { name: "Mallory", email: "bob@example.com" });
    const mallory = later.body.key.key as string;
    const as = (key: string, path: string) =>
      t.request("GET", path, undefined, { authorization: `Bearer ${key}` });
    expectStatus(await as(mallory, `/api/v2/projects/${projectId}`), 404);
    expect((await as(mallory, "/api/v2/projects/shared")).body.projects).toEqual([]);
    expectStatus(await asBob("GET", `/api/v2/projects/${projectId}`), 200);
    // An email no account has: the grant is listed and gives nobody access.
    const nobody = await t.api("POST", `/api/v2/projects/${projectId}/permissions`, {
      email: "nobody@example.com",
    });
    expectStatus(nobody, 200);
    const late = await t.api("POST", "/_emulator/accounts", { name: "Late", email: "nobody@example.com" });
    expectStatus(await as(late.body.key.key, `/api/v2/projects/${projectId}`), 404);
  });

  it("a project that changes hands keeps none of its grants", async () => {
    expectStatus(
      await t.api("POST", `/api/v2/projects/${projectId}/permissions`, { email: "bob@example.com" }),
      200,
    );
    const carol = await t.api("POST", "/_emulator/accounts", { name: "Carol", email: "carol@example.com" });
    const offer = await t.api("POST", `/api/v2/projects/${projectId}/transfer_requests`, {});
    expectStatus(
      await t.request(
        "PUT",
        `/api/v2/projects/${projectId}/transfer_requests/${offer.body.id}`,
        {},
        {
          authorization: `Bearer ${carol.body.key.key}`,
        },
      ),
      204,
    );
    expectStatus(await asBob("GET", `/api/v2/projects/${projectId}`), 404);
  });
});
