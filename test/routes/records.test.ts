/**
 * Routes that store and list what Neon configures elsewhere (JWKS URLs, VPC endpoints, spending
 * limits) and the preload library catalogue.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let branchId: string;
let orgId: string;
beforeEach(async () => {
  t = createTestApp();
  const created = await t.api("POST", "/api/v2/projects", {
    project: { name: "p", region_id: "aws-us-east-2" },
  });
  expectStatus(created, 201);
  projectId = created.body.project.id;
  branchId = created.body.branch.id;
  orgId = (await t.api("GET", "/api/v2/users/me/organizations")).body.organizations[0].id;
});
afterEach(() => t.close());

describe("JWKS", () => {
  it("adds (201, no operation), lists and deletes JWKS URLs; bad input is refused", async () => {
    const url = `/api/v2/projects/${projectId}/jwks`;
    expect((await t.api("GET", url)).body).toEqual({ jwks: [] });
    const added = await t.api("POST", url, {
      jwks_url: "https://example.clerk.accounts.dev/.well-known/jwks.json",
      provider_name: "Clerk",
      branch_id: branchId,
      jwt_audience: "app",
    });
    expectStatus(added, 201);
    expect(added.body).toEqual({
      jwks: {
        id: expect.any(String),
        project_id: projectId,
        branch_id: branchId,
        jwks_url: "https://example.clerk.accounts.dev/.well-known/jwks.json",
        provider_name: "Clerk",
        jwt_audience: "app",
        role_names: ["authenticator", "authenticated", "anonymous"],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      operations: [],
    });
    expect((await t.api("GET", url)).body.jwks).toEqual([added.body.jwks]);

    for (const body of [
      { jwks_url: "http://insecure.example/jwks.json", provider_name: "x" },
      { jwks_url: "not a url", provider_name: "x" },
      { jwks_url: "https://ok.example/jwks.json" },
    ])
      expectStatus(await t.api("POST", url, body), 400);
    expectStatus(
      await t.api("POST", url, {
        jwks_url: "https://ok.example/j",
        provider_name: "x",
        branch_id: "br-none-1",
      }),
      404,
    );

    const removed = await t.api("DELETE", `${url}/${added.body.jwks.id}`);
    expectStatus(removed, 200);
    expect(removed.body).toEqual(added.body.jwks);
    expectStatus(await t.api("DELETE", `${url}/${added.body.jwks.id}`), 404);
    expect((await t.api("GET", url)).body).toEqual({ jwks: [] });
  });
});

describe("VPC endpoints", () => {
  it("assigns to the organization per region, restricts projects to them, and deletes for good", async () => {
    const region = `/api/v2/organizations/${orgId}/vpc/region/aws-us-east-2/vpc_endpoints`;
    const vpce = "vpce-0123456789abcdef0";
    // A restriction needs the endpoint in the organization first.
    expectStatus(
      await t.api("POST", `/api/v2/projects/${projectId}/vpc_endpoints/${vpce}`, { label: "x" }),
      400,
    );
    expectStatus(await t.api("POST", `${region}/${vpce}`, { label: "prod vpc" }), 200);
    expectStatus(await t.api("POST", `${region}/${vpce}`, { label: "prod" }), 200); // relabel
    expect((await t.api("GET", region)).body).toEqual({
      endpoints: [{ vpc_endpoint_id: vpce, label: "prod" }],
    });
    expect((await t.api("GET", `/api/v2/organizations/${orgId}/vpc/vpc_endpoints`)).body).toEqual({
      endpoints: [{ vpc_endpoint_id: vpce, label: "prod", region_id: "aws-us-east-2" }],
    });
    expect(
      (await t.api("GET", `/api/v2/organizations/${orgId}/vpc/region/aws-eu-west-2/vpc_endpoints`)).body,
    ).toEqual({ endpoints: [] });
    // An endpoint in another region than the project's cannot restrict it.
    const eu = `/api/v2/organizations/${orgId}/vpc/region/aws-eu-west-2/vpc_endpoints/vpce-eu`;
    expectStatus(await t.api("POST", eu, { label: "eu" }), 200);
    expectStatus(
      await t.api("POST", `/api/v2/projects/${projectId}/vpc_endpoints/vpce-eu`, { label: "x" }),
      400,
    );
    expectStatus(await t.api("DELETE", eu), 200);
    const restricted = await t.api("POST", `/api/v2/projects/${projectId}/vpc_endpoints/${vpce}`, {
      label: "app",
    });
    expectStatus(restricted, 200);
    expect((await t.api("GET", `/api/v2/projects/${projectId}/vpc_endpoints`)).body).toEqual({
      endpoints: [{ vpc_endpoint_id: vpce, label: "app" }],
    });
    const details = await t.api("GET", `${region}/${vpce}`);
    expectStatus(details, 200);
    expect(details.body).toEqual({
      vpc_endpoint_id: vpce,
      label: "prod",
      state: "accepted",
      num_restricted_projects: 1,
      example_restricted_projects: [projectId],
    });

    expectStatus(await t.api("GET", `/api/v2/organizations/${orgId}/vpc/region/mars-1/vpc_endpoints`), 404);
    expectStatus(await t.api("POST", `${region}/bad_id!`, { label: "x" }), 400);
    expectStatus(await t.api("POST", `${region}/${vpce}`, {}), 400); // label is required (it may be empty)
    expectStatus(await t.api("DELETE", `/api/v2/projects/${projectId}/vpc_endpoints/vpce-unknown`), 404);

    // Deleting from the organization lifts the restriction; it cannot be added back.
    expectStatus(await t.api("DELETE", `${region}/${vpce}`), 200);
    expect((await t.api("GET", `/api/v2/projects/${projectId}/vpc_endpoints`)).body).toEqual({
      endpoints: [],
    });
    expectStatus(await t.api("GET", `${region}/${vpce}`), 404);
    const again = await t.api("POST", `${region}/${vpce}`, { label: "back" });
    expectStatus(again, 400);
    expect(again.body.message).toContain("cannot be added back");
  });
});

describe("spending limit", () => {
  it("is null until set, takes positive cents, and clears idempotently", async () => {
    const url = `/api/v2/organizations/${orgId}/billing/spending_limit`;
    expect((await t.api("GET", url)).body).toEqual({ spending_limit_cents: null });
    const set = await t.api("PUT", url, { spending_limit_cents: 50_000 });
    expectStatus(set, 200);
    expect(set.body).toEqual({ spending_limit_cents: 50_000 });
    expect((await t.api("GET", url)).body).toEqual({ spending_limit_cents: 50_000 });
    for (const bad of [
      { spending_limit_cents: 0 },
      { spending_limit_cents: null },
      { spending_limit_cents: 1.5 },
      {},
    ])
      expectStatus(await t.api("PUT", url, bad), 400);
    expect((await t.api("DELETE", url)).body).toEqual({});
    expectStatus(await t.api("DELETE", url), 200);
    expect((await t.api("GET", url)).body).toEqual({ spending_limit_cents: null });
    expectStatus(await t.api("GET", "/api/v2/organizations/org-someone-else/billing/spending_limit"), 404);
  });

  it("is a paid-plan feature", async () => {
    const free = createTestApp({ plan: "free" });
    try {
      const org = (await free.api("GET", "/api/v2/users/me/organizations")).body.organizations[0].id;
      const res = await free.api("GET", `/api/v2/organizations/${org}/billing/spending_limit`);
      expectStatus(res, 422);
      expect(res.body.message).toContain("paid plans");
    } finally {
      free.close();
    }
  });
});

describe("preload libraries", () => {
  it("lists what the project's Postgres can preload, and settings may enable only those", async () => {
    const res = await t.api("GET", `/api/v2/projects/${projectId}/available_preload_libraries`);
    expectStatus(res, 200);
    const names = res.body.libraries.map((l: { library_name: string }) => l.library_name);
    expect(names).toContain("pg_stat_statements");
    expect(res.body.libraries[0]).toEqual({
      library_name: "pg_stat_statements",
      description: expect.any(String),
      is_default: true,
      is_experimental: false,
      version: "1.11",
    });
    const ok = await t.api("PATCH", `/api/v2/projects/${projectId}`, {
      project: { settings: { preload_libraries: { enabled_libraries: ["pg_stat_statements"] } } },
    });
    expectStatus(ok, 200);
    const bad = await t.api("PATCH", `/api/v2/projects/${projectId}`, {
      project: { settings: { preload_libraries: { enabled_libraries: ["timescaledb"] } } },
    });
    expectStatus(bad, 400);
    expect(bad.body.message).toContain("preload_libraries.enabled_libraries");
  });
});
