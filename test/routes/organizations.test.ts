import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

/** Another account (another user with its own organization), as a test suite would make one. */
async function otherAccount(email: string, plan: "paid" | "free" = "paid") {
  const res = await t.api("POST", "/_emulator/accounts", { name: email, email, plan });
  expectStatus(res, 201);
  const key = res.body.key.key as string;
  const org = (await as(key, "GET", "/api/v2/users/me/organizations")).body.organizations[0].id as string;
  return { key, org, userId: res.body.account.id as string };
}

describe("organization members and invitations", () => {
  it("the account's user is the admin member; the last admin cannot be demoted or removed", async () => {
    const list = await t.api("GET", `/api/v2/organizations/${orgId}/members`);
    expectStatus(list, 200);
    expect(list.body.members).toEqual([
      {
        member: {
          id: expect.any(String),
          user_id: t.accountId,
          org_id: orgId,
          role: "admin",
          joined_at: expect.any(String),
        },
        user: { email: "user@example.com" },
      },
    ]);
    expect(list.body.pagination).toEqual({ sort_by: "joined_at", sort_order: "desc" });
    const memberId = list.body.members[0].member.id;
    const one = await t.api("GET", `/api/v2/organizations/${orgId}/members/${memberId}`);
    expectStatus(one, 200);
    expect(one.body).toEqual(list.body.members[0].member);

    const demote = await t.api("PATCH", `/api/v2/organizations/${orgId}/members/${memberId}`, {
      role: "member",
    });
    expectStatus(demote, 409);
    expect(demote.body.message).toContain("last admin");
    expectStatus(await t.api("DELETE", `/api/v2/organizations/${orgId}/members/${memberId}`), 409);
    expect((await t.api("GET", `/api/v2/organizations/${orgId}/members/${memberId}`)).body.role).toBe(
      "admin",
    );

    expectStatus(await t.api("GET", `/api/v2/organizations/${orgId}/members/not-a-uuid`), 400);
    expectStatus(
      await t.api("GET", `/api/v2/organizations/${orgId}/members/00000000-0000-4000-8000-000000000000`),
      404,
    );
    expectStatus(
      await t.api("PATCH", `/api/v2/organizations/${orgId}/members/${memberId}`, { role: "owner" }),
      400,
    );
    expectStatus(await t.api("GET", "/api/v2/organizations/org-someone-else/members"), 404);
  });

  it("an invitation to an email with an account joins it as a member; roles change; members page and leave", async () => {
    const bob = await otherAccount("bob@example.com");
    const invite = await t.api("POST", `/api/v2/organizations/${orgId}/invitations`, {
      invitations: [
        { email: "bob@example.com", role: "member" },
        { email: "nobody@example.com", role: "viewer" },
      ],
    });
    expectStatus(invite, 200);
    expect(invite.body.invitations).toEqual([
      expect.objectContaining({
        email: "bob@example.com",
        role: "member",
        org_id: orgId,
        invited_by: t.accountId,
      }),
      expect.objectContaining({ email: "nobody@example.com", role: "viewer", org_id: orgId }),
    ]);
    expect((await t.api("GET", `/api/v2/organizations/${orgId}/invitations`)).body.invitations).toEqual(
      invite.body.invitations,
    );
    expectStatus(
      await t.api("POST", `/api/v2/organizations/${orgId}/invitations`, {
        invitations: [{ email: "not an email", role: "member" }],
      }),
      400,
    );
    expectStatus(await t.api("POST", `/api/v2/organizations/${orgId}/invitations`, { invitations: [] }), 400);

    // Bob joined at once (he has an account); nobody@ has not.
    const first = await t.api(
      "GET",
      `/api/v2/organizations/${orgId}/members?sort_by=email&sort_order=asc&limit=1`,
    );
    expectStatus(first, 200);
    expect(first.body.members.map((m: { user: { email: string } }) => m.user.email)).toEqual([
      "bob@example.com",
    ]);
    expect(first.body.members[0].member).toMatchObject({ user_id: bob.userId, role: "member" });
    const next = first.body.pagination.next as string;
    const second = await t.api(
      "GET",
      `/api/v2/organizations/${orgId}/members?sort_by=email&sort_order=asc&limit=1&cursor=${next}`,
    );
    expect(second.body.members.map((m: { user: { email: string } }) => m.user.email)).toEqual([
      "user@example.com",
    ]);
    expect(second.body.pagination.next).toBeUndefined();
    expectStatus(await t.api("GET", `/api/v2/organizations/${orgId}/members?cursor=garbage`), 400);

    const bobMember = first.body.members[0].member.id;
    const promoted = await t.api("PATCH", `/api/v2/organizations/${orgId}/members/${bobMember}`, {
      role: "admin",
    });
    expectStatus(promoted, 200);
    expect(promoted.body.role).toBe("admin");
    // With two admins, the account's own user may step down.
    const mine = second.body.members[0].member.id;
    expectStatus(
      await t.api("PATCH", `/api/v2/organizations/${orgId}/members/${mine}`, { role: "member" }),
      200,
    );
    expectStatus(await t.api("DELETE", `/api/v2/organizations/${orgId}/members/${bobMember}`), 409);
    expectStatus(
      await t.api("PATCH", `/api/v2/organizations/${orgId}/members/${mine}`, { role: "admin" }),
      200,
    );
    const removed = await t.api("DELETE", `/api/v2/organizations/${orgId}/members/${bobMember}`);
    expectStatus(removed, 200);
    expect(removed.body).toEqual({});
    expect((await t.api("GET", `/api/v2/organizations/${orgId}/members`)).body.members).toHaveLength(1);

    // Bob's key sees only his own organization's members.
    expectStatus(await as(bob.key, "GET", `/api/v2/organizations/${orgId}/members`), 404);
    expectStatus(await as(bob.key, "GET", `/api/v2/organizations/${bob.org}/members`), 200);
  });
});

describe("project transfers", () => {
  it("a member moves its projects, with all they hold, into the organization; the rest is refused", async () => {
    const bob = await otherAccount("bob@example.com");
    const created = await as(bob.key, "POST", "/api/v2/projects", { project: { name: "bob's" } });
    expectStatus(created, 201);
    const projectId = created.body.project.id as string;
    const scoped = await as(bob.key, "POST", `/api/v2/organizations/${bob.org}/api_keys`, {
      key_name: "scoped",
      project_id: projectId,
    });
    const vpc = `/api/v2/organizations/${bob.org}/vpc/region/aws-us-east-2/vpc_endpoints/vpce-bob1`;
    expectStatus(await as(bob.key, "POST", vpc, { label: "bob" }), 200);
    expectStatus(
      await as(bob.key, "POST", `/api/v2/projects/${projectId}/vpc_endpoints/vpce-bob1`, { label: "x" }),
      200,
    );
    const transfer = (body: unknown, from = bob.org) =>
      as(bob.key, "POST", `/api/v2/organizations/${from}/projects/transfer`, body);

    // Not (yet) a member of the destination: not found. Own organization: nothing to do.
    expectStatus(await transfer({ destination_org_id: orgId, project_ids: [projectId] }), 404);
    expectStatus(await transfer({ destination_org_id: bob.org, project_ids: [projectId] }), 400);
    expectStatus(await transfer({ destination_org_id: orgId, project_ids: [] }), 400);
    expectStatus(
      await t.api("POST", `/api/v2/organizations/${orgId}/invitations`, {
        invitations: [{ email: "bob@example.com", role: "member" }],
      }),
      200,
    );
    // One unknown project: nothing moves.
    expectStatus(await transfer({ destination_org_id: orgId, project_ids: [projectId, "no-such-1"] }), 404);
    expectStatus(await transfer({ destination_org_id: orgId, project_ids: [projectId] }, orgId), 404);
    expect((await t.api("GET", "/api/v2/projects")).body.projects).toEqual([]);

    const done = await transfer({ destination_org_id: orgId, project_ids: [projectId] });
    expectStatus(done, 200);
    expect(done.body).toEqual({});
    const theirs = await t.api("GET", `/api/v2/projects/${projectId}`);
    expectStatus(theirs, 200);
    expect(theirs.body.project).toMatchObject({ name: "bob's", org_id: orgId });
    expect((await t.api("GET", `/api/v2/projects/${projectId}/branches`)).body.branches).toHaveLength(1);
    expect((await t.api("GET", `/api/v2/projects/${projectId}/endpoints`)).body.endpoints).toHaveLength(1);
    expectStatus(await as(bob.key, "GET", `/api/v2/projects/${projectId}`), 404);
    expectStatus(await as(scoped.body.key, "GET", `/api/v2/projects/${projectId}`), 401);
    // Nothing that named Bob's organization followed the project.
    expect((await t.api("GET", `/api/v2/projects/${projectId}/vpc_endpoints`)).body).toEqual({
      endpoints: [],
    });
  });

  it("a destination whose plan cannot hold more projects answers 406; the personal route moves from the caller's organization", async () => {
    const free = await otherAccount("free@example.com", "free");
    // The free plan holds 20 projects: fill it.
    for (let i = 0; i < 20; i++)
      expectStatus(await as(free.key, "POST", "/api/v2/projects", { project: { name: `p${i}` } }), 201);
    expectStatus(
      await as(free.key, "POST", `/api/v2/organizations/${free.org}/invitations`, {
        invitations: [{ email: "user@example.com", role: "member" }],
      }),
      200,
    );
    const mine = (await t.api("POST", "/api/v2/projects", { project: { name: "mine" } })).body.project.id;
    const full = await t.api("POST", "/api/v2/users/me/projects/transfer", {
      destination_org_id: free.org,
      project_ids: [mine],
    });
    expectStatus(full, 406);
    expect((await t.api("GET", `/api/v2/projects/${mine}`)).status).toBe(200);
    expectStatus(
      await as(
        free.key,
        "DELETE",
        `/api/v2/projects/${(await as(free.key, "GET", "/api/v2/projects")).body.projects[0].id}`,
      ),
      200,
    );
    expectStatus(
      await t.api("POST", "/api/v2/users/me/projects/transfer", {
        destination_org_id: free.org,
        project_ids: [mine],
      }),
      200,
    );
    const listed = await as(free.key, "GET", "/api/v2/projects?limit=100");
    expect(listed.body.projects).toHaveLength(20);
    expect(listed.body.projects.map((p: { id: string }) => p.id)).toContain(mine);
  });
});

describe("project transfer requests", () => {
  it("the owner offers a project; another account accepts it once, before it expires", async () => {
    const bob = await otherAccount("bob@example.com");
    const projectId = (await t.api("POST", "/api/v2/projects", { project: { name: "offered" } })).body.project
      .id;
    const offer = await t.api("POST", `/api/v2/projects/${projectId}/transfer_requests`, {});
    expectStatus(offer, 201);
    expect(offer.body).toEqual({
      id: expect.any(String),
      project_id: projectId,
      created_at: expect.any(String),
      expires_at: expect.any(String),
    });
    expect(Date.parse(offer.body.expires_at) - Date.parse(offer.body.created_at)).toBe(86_400_000);
    expectStatus(await as(bob.key, "POST", `/api/v2/projects/${projectId}/transfer_requests`, {}), 404);
    expectStatus(
      await t.api("POST", `/api/v2/projects/${projectId}/transfer_requests`, { ttl_seconds: 1 }),
      400,
    );

    const accept = (key: string, id = offer.body.id, body: unknown = {}) =>
      as(key, "PUT", `/api/v2/projects/${projectId}/transfer_requests/${id}`, body);
    expectStatus(await accept(bob.key, "00000000-0000-4000-8000-000000000000"), 404);
    expectStatus(await accept(bob.key, offer.body.id, { org_id: orgId }), 404); // not Bob's organization
    expectStatus(await accept(t.key), 400); // the owner already has it
    const done = await accept(bob.key, offer.body.id, { org_id: bob.org });
    expectStatus(done, 204);
    expect(done.text).toBe("");
    expect((await as(bob.key, "GET", `/api/v2/projects/${projectId}`)).body.project.org_id).toBe(bob.org);
    expectStatus(await t.api("GET", `/api/v2/projects/${projectId}`), 404);
    expectStatus(await accept(bob.key), 409);

    // An expired offer is refused.
    const second = (await t.api("POST", "/api/v2/projects", { project: { name: "late" } })).body.project.id;
    const late = await t.api("POST", `/api/v2/projects/${second}/transfer_requests`, { ttl_seconds: 60 });
    t.advance(61);
    const refused = await as(
      bob.key,
      "PUT",
      `/api/v2/projects/${second}/transfer_requests/${late.body.id}`,
      {},
    );
    expectStatus(refused, 400);
    expect(refused.body.message).toContain("expired");
    expectStatus(await t.api("GET", `/api/v2/projects/${second}`), 200);
  });

  it("offers lapse when the project changes hands, so the former owner cannot take it back", async () => {
    const bob = await otherAccount("bob@example.com");
    const projectId = (await t.api("POST", "/api/v2/projects", { project: { name: "twice" } })).body.project
      .id;
    const first = await t.api("POST", `/api/v2/projects/${projectId}/transfer_requests`, {});
    const second = await t.api("POST", `/api/v2/projects/${projectId}/transfer_requests`, {});
    expectStatus(
      await as(bob.key, "PUT", `/api/v2/projects/${projectId}/transfer_requests/${first.body.id}`, {}),
      204,
    );
    expectStatus(
      await t.api("PUT", `/api/v2/projects/${projectId}/transfer_requests/${second.body.id}`, {}),
      404,
    );
    expect((await as(bob.key, "GET", `/api/v2/projects/${projectId}`)).body.project.org_id).toBe(bob.org);
  });
});
