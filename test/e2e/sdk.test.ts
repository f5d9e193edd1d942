import {
  type Api,
  ConsumptionHistoryGranularity,
  createApiClient,
  MemberRole,
} from "@neondatabase/api-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRODUCT_ROUTES } from "../../src/control-plane/products/catalog.js";
import { publicContract } from "./contract.js";
import { type E2E, startE2E, waitFor } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: SDK payloads are asserted field by field
type Json = any;

/** The status of a rejected SDK call (axios error), or a failure if the call succeeded. */
async function statusOf(call: Promise<unknown>): Promise<{ status: number; body: Json }> {
  try {
    await call;
  } catch (err) {
    const res = (err as { response?: { status: number; data: Json } }).response;
    if (res) return { status: res.status, body: res.data };
    throw err;
  }
  throw new Error("expected the call to fail");
}

/**
 * @neondatabase/api-client against the compiled server: every SDK method of the API-key,
 * project, branch, endpoint, role, database and operation families the emulator serves.
 */
describe("@neondatabase/api-client against the emulator", { timeout: 60_000 }, () => {
  let e2e: E2E;
  let api: Api<unknown>;
  let projectId = "";
  let otherProjectId = "";
  let mainId = "";
  let featureId = "";
  let bareId = "";
  let endpointId = "";
  const step = (name: string) => e2e.step(`sdk: ${name}`);

  beforeAll(async () => {
    e2e = await startE2E({ NEON_EMULATOR_OPERATION_MS: "start_compute=200,suspend_compute=100" });
    api = createApiClient({ apiKey: e2e.key, baseURL: e2e.apiBase });
  });
  afterAll(async () => {
    await e2e?.close();
  });

  const finished = (opId: string, project = projectId) =>
    waitFor(`operation ${opId} to finish`, async () => {
      const { data } = await api.getProjectOperation(project, opId);
      expect(data.operation.status).not.toBe("failed");
      return data.operation.status === "finished" ? data.operation : undefined;
    });

  it("users, organizations, auth and regions", async () => {
    step("users");
    const me = await api.getCurrentUserInfo();
    expect(me.status).toBe(200);
    expect(me.data.email).toBe("user@example.com");
    const orgs = await api.getCurrentUserOrganizations();
    expect(orgs.data.organizations).toHaveLength(1);
    const auth = await api.getAuthDetails();
    expect(auth.data.account_id).toBe(orgs.data.organizations[0]?.id);
    const org = await api.getOrganization(auth.data.account_id);
    expect(org.data).toEqual(orgs.data.organizations[0]);
    const regions = await api.getActiveRegions({});
    expect(regions.data.regions.some((r) => r.region_id === "aws-us-east-2" && r.default)).toBe(true);
  });

  it("API keys: create (shown once), list (never the secret), revoke (then 401)", async () => {
    step("api keys");
    const created = await api.createApiKey({ key_name: "sdk-e2e" });
    expect(created.status).toBe(200);
    expect(created.data.key).toMatch(/^[a-z0-9]{64}$/);
    const list = await api.listApiKeys();
    const listed = list.data.find((k) => k.id === created.data.id);
    expect(listed).toMatchObject({ name: "sdk-e2e" });
    expect(JSON.stringify(list.data)).not.toContain(created.data.key);

    const other = createApiClient({ apiKey: created.data.key, baseURL: e2e.apiBase });
    expect((await other.listProjects({})).status).toBe(200);
    const revoked = await api.revokeApiKey(created.data.id);
    expect(revoked.data).toMatchObject({ id: created.data.id, name: "sdk-e2e", revoked: true });
    step("api keys: revoked key");
    expect((await statusOf(other.listProjects({}))).status).toBe(401);
    expect((await api.listApiKeys()).data.map((k) => k.id)).not.toContain(created.data.id);
  });

  it("projects: create, poll its start_compute to finished, get, list with paging, shared, update", async () => {
    step("projects: create");
    const created = await api.createProject({
      project: { name: "sdk-e2e", region_id: "aws-us-east-2", pg_version: 16 },
    });
    expect(created.status).toBe(201);
    const data: Json = created.data;
    projectId = data.project.id;
    mainId = data.branch.id;
    expect(data.project).toMatchObject({ name: "sdk-e2e", pg_version: 16, region_id: "aws-us-east-2" });
    expect(data.operations.map((o: Json) => o.action)).toEqual(["create_timeline", "start_compute"]);
    expect(data.endpoints[0]).toMatchObject({ current_state: "init", pending_state: "active" });

    step("projects: poll operations");
    for (const op of data.operations) await finished(op.id);
    const ep = (await api.getProjectEndpoint(projectId, data.endpoints[0].id)).data.endpoint;
    expect(ep.current_state).toBe("active");
    expect(ep.pending_state).toBeUndefined();

    step("projects: second project");
    otherProjectId = (await api.createProject({ project: { name: "sdk-e2e-other" } })).data.project.id;

    step("projects: get, list");
    expect((await api.getProject(projectId)).data.project).toMatchObject({ id: projectId, name: "sdk-e2e" });
    const first = await api.listProjects({ limit: 1 });
    expect(first.data.projects.map((p) => p.id)).toEqual([projectId]);
    const cursor = first.data.pagination?.cursor;
    expect(cursor).toBeTruthy();
    const second = await api.listProjects({ limit: 1, cursor });
    expect(second.data.projects.map((p) => p.id)).toEqual([otherProjectId]);
    expect(second.data.pagination).toBeUndefined();
    expect((await api.listProjects({ search: "other" })).data.projects.map((p) => p.id)).toEqual([
      otherProjectId,
    ]);
    expect((await api.listSharedProjects({})).data.projects).toEqual([]);

    step("projects: update");
    const updated = await api.updateProject(projectId, {
      project: { name: "sdk-renamed", history_retention_seconds: 3600 },
    });
    expect(updated.data.project).toMatchObject({ name: "sdk-renamed", history_retention_seconds: 3600 });
    expect(updated.data.operations.map((o) => o.action)).toEqual(["apply_storage_config"]);
    await finished(updated.data.operations[0]?.id as string);
  });

  it("organization keys: one for the organization, one scoped to a project (others 404, the organization 403)", async () => {
    step("org api keys");
    const orgId = (await api.getAuthDetails()).data.account_id;
    const created = await api.createOrgApiKey(orgId, { key_name: "sdk-org", project_id: projectId });
    expect(created.status).toBe(200);
    expect(created.data).toMatchObject({ name: "sdk-org", project_id: projectId });
    const listed = (await api.listOrgApiKeys(orgId)).data.find((k) => k.id === created.data.id);
    expect(listed).toMatchObject({ name: "sdk-org", project_id: projectId });
    expect((await api.listApiKeys()).data.map((k) => k.id)).not.toContain(created.data.id);

    const scoped = createApiClient({ apiKey: created.data.key, baseURL: e2e.apiBase });
    expect((await scoped.listProjects({})).data.projects.map((p) => p.id)).toEqual([projectId]);
    expect((await statusOf(scoped.getProject(otherProjectId))).status).toBe(404);
    expect((await statusOf(scoped.createProject({ project: { name: "nope" } }))).status).toBe(403);
    expect((await statusOf(scoped.listOrgApiKeys(orgId))).status).toBe(403);

    const revoked = await api.revokeOrgApiKey(orgId, created.data.id);
    expect(revoked.data).toMatchObject({ id: created.data.id, revoked: true, project_id: projectId });
    expect((await statusOf(scoped.getProject(projectId))).status).toBe(401);
  });

  it("organizations: members, invitations, a role change, transfers into another organization", async () => {
    step("org members");
    const orgId = (await api.getAuthDetails()).data.account_id;
    const made = await fetch(`${e2e.server.url}/_emulator/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${e2e.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Other", email: "other@example.com" }),
    });
    expect(made.status).toBe(201);
    const other = createApiClient({ apiKey: ((await made.json()) as Json).key.key, baseURL: e2e.apiBase });
    const otherOrg = (await other.getAuthDetails()).data.account_id;

    const invited = await api.createOrganizationInvitations(orgId, {
      invitations: [{ email: "other@example.com", role: MemberRole.Member }],
    });
    expect(invited.data.invitations[0]).toMatchObject({ email: "other@example.com", org_id: orgId });
    expect((await api.getOrganizationInvitations(orgId)).data.invitations).toHaveLength(1);
    const members = (await api.getOrganizationMembers({ orgId, sort_by: "email", sort_order: "asc" })).data
      .members;
    expect(members.map((m) => [m.user.email, m.member.role])).toEqual([
      ["other@example.com", "member"],
      ["user@example.com", "admin"],
    ]);
    const joined = members[0]?.member.id as string;
    expect((await api.getOrganizationMember(orgId, joined)).data.role).toBe("member");
    expect((await api.updateOrganizationMember(orgId, joined, { role: MemberRole.Viewer })).data.role).toBe(
      "viewer",
    );
    expect((await api.removeOrganizationMember(orgId, joined)).data).toEqual({});

    step("project permissions");
    const grant = await api.grantPermissionToProject(otherProjectId, { email: "other@example.com" });
    expect(grant.data.granted_to_email).toBe("other@example.com");
    expect((await api.listProjectPermissions(otherProjectId)).data.project_permissions).toEqual([grant.data]);
    expect((await other.listSharedProjects({})).data.projects.map((p) => p.id)).toEqual([otherProjectId]);
    expect((await other.getProject(otherProjectId)).data.project.id).toBe(otherProjectId);
    expect((await statusOf(other.deleteProject(otherProjectId))).status).toBe(403);
    expect(
      (await api.revokePermissionFromProject(otherProjectId, grant.data.id)).data.revoked_at,
    ).toBeTruthy();
    expect((await statusOf(other.getProject(otherProjectId))).status).toBe(404);

    step("org transfers");
    await other.createOrganizationInvitations(otherOrg, {
      invitations: [{ email: "user@example.com", role: MemberRole.Admin }],
    });
    const leaving = (await api.createProject({ project: { name: "sdk-transfer" } })).data.project.id;
    const staying = (await api.createProject({ project: { name: "sdk-transfer-2" } })).data.project.id;
    expect(
      (
        await api.transferProjectsFromOrgToOrg(orgId, {
          destination_org_id: otherOrg,
          project_ids: [leaving],
        })
      ).status,
    ).toBe(200);
    expect(
      (await api.transferProjectsFromUserToOrg({ destination_org_id: otherOrg, project_ids: [staying] }))
        .status,
    ).toBe(200);
    expect((await statusOf(api.getProject(leaving))).status).toBe(404);
    expect((await other.listProjects({})).data.projects.map((p) => p.id).sort()).toEqual(
      [leaving, staying].sort(),
    );

    step("transfer requests");
    const offered = (await api.createProject({ project: { name: "sdk-offered" } })).data.project.id;
    const offer = await api.createProjectTransferRequest(offered, { ttl_seconds: 3600 });
    expect(offer.status).toBe(201);
    expect((await other.acceptProjectTransferRequest(offered, offer.data.id, {})).status).toBe(204);
    expect((await other.getProject(offered)).data.project.org_id).toBe(otherOrg);
  });

  it("records: JWKS, VPC endpoints, the spending limit, preload libraries", async () => {
    step("jwks");
    const orgId = (await api.getAuthDetails()).data.account_id;
    const added = await api.addProjectJwks(projectId, {
      jwks_url: "https://example.auth0.com/.well-known/jwks.json",
      provider_name: "Auth0",
    });
    expect(added.status).toBe(201);
    expect((await api.getProjectJwks(projectId)).data.jwks.map((j) => j.id)).toEqual([added.data.jwks.id]);
    expect((await api.deleteProjectJwks(projectId, added.data.jwks.id)).data.id).toBe(added.data.jwks.id);

    step("vpc endpoints");
    const vpce = "vpce-0aa11bb22cc33dd44";
    await api.assignOrganizationVpcEndpoint(orgId, "aws-us-east-2", vpce, { label: "sdk" });
    expect((await api.listOrganizationVpcEndpoints(orgId, "aws-us-east-2")).data.endpoints).toEqual([
      { vpc_endpoint_id: vpce, label: "sdk" },
    ]);
    expect((await api.listOrganizationVpcEndpointsAllRegions(orgId)).data.endpoints[0]?.region_id).toBe(
      "aws-us-east-2",
    );
    await api.assignProjectVpcEndpoint(otherProjectId, vpce, { label: "restricted" });
    expect((await api.listProjectVpcEndpoints(otherProjectId)).data.endpoints).toEqual([
      { vpc_endpoint_id: vpce, label: "restricted" },
    ]);
    const details = await api.getOrganizationVpcEndpointDetails(orgId, "aws-us-east-2", vpce);
    expect(details.data).toMatchObject({ state: "accepted", example_restricted_projects: [otherProjectId] });
    await api.deleteProjectVpcEndpoint(otherProjectId, vpce);
    await api.deleteOrganizationVpcEndpoint(orgId, "aws-us-east-2", vpce);
    expect((await api.listOrganizationVpcEndpointsAllRegions(orgId)).data.endpoints).toEqual([]);

    step("spending limit");
    expect((await api.setOrganizationSpendingLimit(orgId, { spending_limit_cents: 2500 })).data).toEqual({
      spending_limit_cents: 2500,
    });
    expect((await api.getOrganizationSpendingLimit(orgId)).data.spending_limit_cents).toBe(2500);
    await api.deleteOrganizationSpendingLimit(orgId);
    expect((await api.getOrganizationSpendingLimit(orgId)).data.spending_limit_cents).toBeNull();

    step("preload libraries");
    const libs = (await api.getAvailablePreloadLibraries(projectId)).data.libraries ?? [];
    expect(libs.map((l) => l.library_name)).toContain("pg_stat_statements");
  });

  it("products the emulator does not run: every SDK call answers 404 not enabled (or not available)", async () => {
    step("products not run");
    const values: Record<string, string> = {
      projectId,
      branchId: mainId,
      databaseName: "neondb",
      bucketName: "assets",
      objectKey: "a.txt",
      tokenId: "tok-1",
      slug: "hello",
      authUserId: "00000000-0000-4000-8000-000000000000",
      oauthProviderId: "google",
      authProvider: "stack",
    };
    const camel = (name: string) => name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase());
    const methods = api as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    // Branch logs are not in the public document (nor in this SDK): the CLI suite calls them.
    for (const route of PRODUCT_ROUTES.filter((r) => r.product !== "logs")) {
      const name = Object.keys(methods).find((k) => k.toLowerCase() === route.operationId.toLowerCase());
      expect(name, route.operationId).toBeDefined();
      const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => values[camel(m[1] as string)]);
      const method = methods[name as string] as (...args: unknown[]) => Promise<unknown>;
      // These take their path and query in one object.
      const oneObject = [
        "listProjectBranchBucketObjects",
        "deleteProjectBranchBucketObjectsByPrefix",
        "listProjectBranchFunctions",
        "getProjectAdvisorSecurityIssues",
      ].includes(route.operationId);
      const data = route.path.startsWith("/projects/auth/") ? { project_id: projectId } : {};
      const args = oneObject
        ? [{ projectId, branchId: mainId, bucketName: "assets", prefix: "p/" }]
        : [...params, ...(route.body === "none" ? [] : [data])];
      const res = await statusOf(method.apply(api, args));
      expect(res.status, route.operationId).toBe(404);
      expect(res.body.message, route.operationId).toMatch(/not (enabled|available) for/);
    }
  });

  it("consumption history: v1 and v2 per project, v2 per branch, from the computes' activity", async () => {
    step("consumption");
    const orgId = (await api.getAuthDetails()).data.account_id;
    const hour = 3_600_000;
    const from = new Date(Math.floor(Date.now() / hour) * hour - hour).toISOString();
    const to = new Date(Math.floor(Date.now() / hour) * hour + hour).toISOString();
    const granularity = ConsumptionHistoryGranularity.Hourly;
    const v1 = await api.getConsumptionHistoryPerProject({ from, to, granularity, project_ids: [projectId] });
    expect(v1.data.projects.map((p) => p.project_id)).toEqual([projectId]);
    const frames = v1.data.projects[0]?.periods.flatMap((p) => p.consumption) ?? [];
    expect(frames).toHaveLength(2);
    // The project's compute has been active since it was created, minutes ago.
    expect(frames.reduce((sum, f) => sum + f.active_time_seconds, 0)).toBeGreaterThan(0);
    const v2 = await api.getConsumptionHistoryPerProjectV2({
      from,
      to,
      granularity,
      org_id: orgId,
      metrics: ["compute_unit_seconds"],
      project_ids: [projectId],
    });
    expect(v2.data.projects[0]?.periods[0]?.consumption[0]?.metrics?.[0]?.metric_name).toBe(
      "compute_unit_seconds",
    );
    const branches = await api.getConsumptionHistoryPerBranchV2({
      from,
      to,
      granularity,
      org_id: orgId,
      metrics: ["compute_unit_seconds"],
      project_ids: [projectId],
    });
    expect(branches.data.branches.map((b) => b.project_id)).toContain(projectId);
  });

  it("connection URI, plain and pooled", async () => {
    step("connection uri");
    const q = { projectId, database_name: "neondb", role_name: "neondb_owner" };
    const plain = new URL((await api.getConnectionUri(q)).data.uri);
    const pooled = new URL((await api.getConnectionUri({ ...q, pooled: true })).data.uri);
    expect(plain.protocol).toBe("postgresql:");
    expect(plain.username).toBe("neondb_owner");
    expect(pooled.hostname).toBe(plain.hostname.replace(/^(ep-[a-z0-9-]+?)\./, "$1-pooler."));
    const branchUri = await api.getConnectionUri({ ...q, branch_id: mainId });
    expect(branchUri.data.uri).toBe(plain.toString());
  });

  it("schema and compare_schema read a branch's real database: on a server without computes, a clear 422", async () => {
    step("branch schema (no computes)");
    for (const call of [
      api.getProjectBranchSchema({ projectId, branchId: mainId, db_name: "neondb" }),
      api.getProjectBranchSchemaComparison({
        projectId,
        branchId: mainId,
        base_branch_id: mainId,
        db_name: "neondb",
      }),
    ]) {
      const res = await statusOf(call);
      expect(res.status).toBe(422);
      expect(res.body.message).toContain("NEON_EMULATOR_COMPUTE=postgres");
    }
  });

  it("branches: create (with endpoint and annotation, and without a body), list with paging, get, rename, set default", async () => {
    step("branches: create");
    const feature = await api.createProjectBranch(projectId, {
      branch: { name: "feature" },
      endpoints: [{ type: "read_write" as never, autoscaling_limit_max_cu: 1 }],
      annotation_value: { owner: "sdk" },
    });
    expect(feature.status).toBe(201);
    featureId = feature.data.branch.id;
    expect(feature.data.branch).toMatchObject({ name: "feature", parent_id: mainId });
    expect(feature.data.endpoints).toHaveLength(1);
    expect(feature.data.operations.map((o) => o.action)).toEqual(["create_branch", "start_compute"]);
    expect(feature.data.connection_uris?.[0]?.connection_uri).toContain(feature.data.endpoints[0]?.host);

    step("branches: create without body");
    const bare = await api.createProjectBranch(projectId);
    expect(bare.status).toBe(201);
    bareId = bare.data.branch.id;
    expect(bare.data.branch.parent_id).toBe(mainId);
    expect(bare.data.endpoints).toEqual([]);
    // Endpoint operations on a branch wait for its creation; a careful client polls it first.
    await finished(bare.data.operations[0]?.id as string);

    step("branches: list");
    const all = await api.listProjectBranches({ projectId });
    expect(all.data.branches).toHaveLength(3);
    expect((await api.countProjectBranches({ projectId })).data.count).toBe(3);
    expect(all.data.annotations[featureId]?.value).toEqual({ owner: "sdk" });
    expect(all.data.pagination?.next).toBeUndefined();
    const names: string[] = [];
    let next: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await api.listProjectBranches({
        projectId,
        limit: 2,
        sort_by: "name",
        sort_order: "asc",
        cursor: next,
      });
      names.push(...res.data.branches.map((b) => b.name));
      next = res.data.pagination?.next;
      if (!next) break;
    }
    expect(names).toEqual([...all.data.branches.map((b) => b.name)].sort());

    step("branches: get");
    const got = await api.getProjectBranch(projectId, featureId);
    expect(got.data.branch).toMatchObject({ id: featureId, name: "feature" });
    expect(got.data.annotation.value).toEqual({ owner: "sdk" });
    const plainBranch = await api.getProjectBranch(projectId, bareId);
    expect(plainBranch.data.annotation.value).toEqual({});

    step("branches: update");
    const renamed = await api.updateProjectBranch(projectId, featureId, { branch: { name: "feature-2" } });
    expect(renamed.data.branch.name).toBe("feature-2");

    step("branches: set default");
    const def = await api.setDefaultProjectBranch(projectId, featureId);
    expect(def.data.branch).toMatchObject({ id: featureId, default: true });
    expect((await api.getProjectBranch(projectId, mainId)).data.branch.default).toBe(false);
    await api.setDefaultProjectBranch(projectId, mainId);

    step("branches: list endpoints");
    const eps = await api.listProjectBranchEndpoints(projectId, featureId);
    expect(eps.data.endpoints.map((e) => e.branch_id)).toEqual([featureId]);
    expect((await api.listProjectBranchEndpoints(projectId, bareId)).data.endpoints).toEqual([]);
  });

  it("branch restore: a reset from the parent keeps the branch's id, the old state is preserved under a name", async () => {
    step("branches: restore");
    const made = await api.createProjectBranch(projectId, { branch: { name: "to-reset" } });
    const id = made.data.branch.id;
    await waitFor("the branch to be ready", async () => {
      const b = (await api.getProjectBranch(projectId, id)).data.branch;
      return b.current_state === "ready" ? b : undefined;
    });
    const restored = await api.restoreProjectBranch(projectId, id, {
      source_branch_id: mainId,
      preserve_under_name: "to-reset-before",
    });
    expect(restored.data.branch).toMatchObject({ id, parent_id: mainId });
    expect(restored.data.operations.map((o) => o.action)).toEqual(["create_branch", "create_branch"]);
    const names = (await api.listProjectBranches({ projectId })).data.branches.map((b) => b.name);
    expect(names).toContain("to-reset-before");
  });

  it("snapshots: take, list, rename, restore to a branch, finalize it in the source's place, delete; backup schedule", async () => {
    step("snapshots");
    const made = await api.createProjectBranch(projectId, { branch: { name: "snapped" } });
    const source = made.data.branch.id;
    await waitFor("the branch to be ready", async () => {
      const b = (await api.getProjectBranch(projectId, source)).data.branch;
      return b.current_state === "ready" ? b : undefined;
    });
    const taken = await api.createSnapshot({ projectId, branchId: source, name: "sdk-snap" });
    const snapshotId = taken.data.snapshot.id;
    expect(taken.data.snapshot).toMatchObject({ name: "sdk-snap", source_branch_id: source });
    expect((await api.listSnapshots(projectId)).data.snapshots.map((x) => x.id)).toContain(snapshotId);
    const renamed = await api.updateSnapshot(projectId, snapshotId, { snapshot: { name: "sdk-snap-2" } });
    expect(renamed.data.snapshot.name).toBe("sdk-snap-2");
    const restored = await api.restoreSnapshot({ projectId, snapshotId }, { name: "from-sdk-snap" });
    expect(restored.data.branch).toMatchObject({ name: "from-sdk-snap", parent_id: source });
    const finalized = await api.finalizeRestoreBranch(projectId, restored.data.branch.id, {
      name: "snapped-old",
    });
    expect(Array.isArray(finalized.data.operations)).toBe(true);
    expect((await api.getProjectBranch(projectId, restored.data.branch.id)).data.branch.name).toBe("snapped");
    expect((await api.deleteSnapshot(projectId, snapshotId)).status).toBe(202);
    expect((await api.listSnapshots(projectId)).data.snapshots.map((x) => x.id)).not.toContain(snapshotId);

    step("backup schedule");
    expect((await api.getSnapshotSchedule(projectId, source)).data.schedule).toEqual([]);
    await api.setSnapshotSchedule(projectId, source, { schedule: [{ frequency: "daily", hour: 2 }] });
    expect((await api.getSnapshotSchedule(projectId, source)).data.schedule).toEqual([
      { frequency: "daily", hour: 2 },
    ]);
  });

  it("roles and databases: create, list, get, password, update, delete", async () => {
    step("roles: create");
    const role = await api.createProjectBranchRole(projectId, bareId, { role: { name: "app" } });
    expect(role.status).toBe(201);
    const password = role.data.role.password as string;
    expect(password).toBeTruthy();
    expect(role.data.operations.map((o) => o.action)).toEqual(["apply_config"]);

    step("roles: list, get, reveal, reset");
    const roles = await api.listProjectBranchRoles(projectId, bareId);
    expect(roles.data.roles.map((r) => r.name).sort()).toEqual(["app", "neondb_owner"]);
    expect((await api.getProjectBranchRole(projectId, bareId, "app")).data.role).toMatchObject({
      name: "app",
      branch_id: bareId,
    });
    expect((await api.getProjectBranchRolePassword(projectId, bareId, "app")).data.password).toBe(password);
    const reset = await api.resetProjectBranchRolePassword(projectId, bareId, "app");
    expect(reset.data.role.password).toBeTruthy();
    expect(reset.data.role.password).not.toBe(password);
    expect((await api.getProjectBranchRolePassword(projectId, bareId, "app")).data.password).toBe(
      reset.data.role.password,
    );

    step("databases: create, list, get, update");
    const db = await api.createProjectBranchDatabase(projectId, bareId, {
      database: { name: "appdb", owner_name: "app" },
    });
    expect(db.status).toBe(201);
    expect(db.data.database).toMatchObject({ name: "appdb", owner_name: "app", branch_id: bareId });
    const dbs = await api.listProjectBranchDatabases(projectId, bareId);
    expect(dbs.data.databases.map((d) => d.name).sort()).toEqual(["appdb", "neondb"]);
    expect((await api.getProjectBranchDatabase(projectId, bareId, "appdb")).data.database.owner_name).toBe(
      "app",
    );
    const updated = await api.updateProjectBranchDatabase(projectId, bareId, "appdb", {
      database: { name: "appdb2", owner_name: "neondb_owner" },
    });
    expect(updated.data.database).toMatchObject({ name: "appdb2", owner_name: "neondb_owner" });

    step("databases, roles: delete");
    const delDb = await api.deleteProjectBranchDatabase(projectId, bareId, "appdb2");
    expect(delDb.data.database.name).toBe("appdb2");
    step("databases: get deleted (404)");
    expect((await statusOf(api.getProjectBranchDatabase(projectId, bareId, "appdb2"))).status).toBe(404);
    step("roles: delete");
    const delRole = await api.deleteProjectBranchRole(projectId, bareId, "app");
    expect(delRole.data.role.name).toBe("app");
    expect((await api.listProjectBranchRoles(projectId, bareId)).data.roles.map((r) => r.name)).toEqual([
      "neondb_owner",
    ]);
  });

  it("endpoints: create, conflict, list, get, update, suspend, start, restart, delete", async () => {
    step("endpoints: create");
    const created = await api.createProjectEndpoint(projectId, {
      endpoint: {
        branch_id: bareId,
        type: "read_write" as never,
        autoscaling_limit_min_cu: 0.25,
        autoscaling_limit_max_cu: 0.5,
      },
    });
    expect(created.status).toBe(201);
    endpointId = created.data.endpoint.id;
    expect(created.data.endpoint).toMatchObject({
      branch_id: bareId,
      current_state: "init",
      pending_state: "active",
    });
    expect(created.data.operations.map((o) => [o.action, o.status])).toEqual([["start_compute", "running"]]);

    step("endpoints: second read_write (409)");
    const conflict = await statusOf(
      api.createProjectEndpoint(projectId, { endpoint: { branch_id: bareId, type: "read_write" as never } }),
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body.message).toContain("read_write");

    step("endpoints: list, get");
    const list = await api.listProjectEndpoints(projectId);
    expect(list.data.endpoints.map((e) => e.id)).toContain(endpointId);
    for (const e of list.data.endpoints) expect(e).not.toHaveProperty("pending_state");
    await finished(created.data.operations[0]?.id as string);
    const got = await api.getProjectEndpoint(projectId, endpointId);
    expect(got.data.endpoint).toMatchObject({ id: endpointId, current_state: "active" });

    step("endpoints: update");
    const updated = await api.updateProjectEndpoint(projectId, endpointId, {
      endpoint: { autoscaling_limit_max_cu: 1, suspend_timeout_seconds: 600 },
    });
    expect(updated.data.endpoint).toMatchObject({
      autoscaling_limit_max_cu: 1,
      suspend_timeout_seconds: 600,
    });
    expect(updated.data.operations.map((o) => o.action)).toEqual([
      "apply_config",
      "suspend_compute",
      "start_compute",
    ]);
    await finished(updated.data.operations[2]?.id as string);

    step("endpoints: suspend");
    const suspended = await api.suspendProjectEndpoint(projectId, endpointId);
    expect(suspended.data.operations.map((o) => o.action)).toEqual(["suspend_compute"]);
    await finished(suspended.data.operations[0]?.id as string);
    expect((await api.getProjectEndpoint(projectId, endpointId)).data.endpoint.current_state).toBe("idle");

    step("endpoints: start");
    const started = await api.startProjectEndpoint(projectId, endpointId);
    expect(started.data.operations.map((o) => o.action)).toEqual(["start_compute"]);
    await finished(started.data.operations[0]?.id as string);
    expect((await api.getProjectEndpoint(projectId, endpointId)).data.endpoint.current_state).toBe("active");

    step("endpoints: restart");
    const restarted = await api.restartProjectEndpoint(projectId, endpointId);
    expect(restarted.data.operations.map((o) => o.action)).toEqual(["suspend_compute", "start_compute"]);
    await finished(restarted.data.operations[1]?.id as string);

    step("endpoints: delete");
    const deleted = await api.deleteProjectEndpoint(projectId, endpointId);
    expect(deleted.data.endpoint.id).toBe(endpointId);
    expect(deleted.data.operations).toEqual([]);
    step("endpoints: get deleted (404)");
    expect((await statusOf(api.getProjectEndpoint(projectId, endpointId))).status).toBe(404);
  });

  it("operations: pages with limit + cursor visit every operation once, newest first", async () => {
    step("operations: list");
    const all = (await api.listProjectOperations({ projectId, limit: 1000 })).data.operations;
    expect(all.length).toBeGreaterThan(10);
    const created = all.map((o) => o.created_at);
    expect([...created].sort().reverse()).toEqual(created);

    step("operations: paging");
    const walked: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const res = await api.listProjectOperations({ projectId, limit: 4, cursor });
      walked.push(...res.data.operations.map((o) => o.id));
      if (res.data.operations.length < 4) break;
      cursor = res.data.pagination?.cursor;
      expect(cursor).toBeTruthy();
    }
    expect(walked).toEqual(all.map((o) => o.id));

    step("operations: get");
    const one = await api.getProjectOperation(projectId, all[0]?.id as string);
    expect(one.data.operation).toEqual(all[0]);
  });

  it("client needs: bodiless POSTs with any content type; only the Bearer header authenticates", async () => {
    const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      fetch(`${e2e.apiBase}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const bearer = { authorization: `Bearer ${e2e.key}` };

    step("client needs: empty POST bodies");
    const featureEndpoint = (await api.listProjectBranchEndpoints(projectId, featureId)).data.endpoints[0];
    const posts = [
      `/projects/${projectId}/branches/${mainId}/set_as_default`,
      `/projects/${projectId}/endpoints/${featureEndpoint?.id}/start`,
      `/projects/${projectId}/branches/${bareId}/roles/neondb_owner/reset_password`,
      `/projects/${projectId}/branches`,
    ];
    for (const path of posts)
      for (const contentType of [
        undefined,
        "application/json",
        "text/plain",
        "application/x-www-form-urlencoded",
      ]) {
        const headers: Record<string, string> = {
          ...bearer,
          ...(contentType ? { "content-type": contentType } : {}),
        };
        const res = await send("POST", path, headers, contentType ? "" : undefined);
        expect(
          res.status,
          `POST ${path} (${contentType ?? "no content type"}): ${await res.clone().text()}`,
        ).toBeLessThan(300);
        expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      }

    step("client needs: cookies");
    const cookie = { cookie: `zenith=${e2e.key}; keycloak_token=${e2e.key}` };
    expect((await send("GET", "/projects", cookie)).status).toBe(401);
    expect((await send("GET", "/projects", { ...cookie, authorization: "Bearer not-a-key" })).status).toBe(
      401,
    );
    const both = await send("GET", "/projects", { ...bearer, cookie: "zenith=junk; keycloak_token=junk" });
    expect(both.status).toBe(200);
  });

  it("deletes a branch and both projects; unknown ids are 404", async () => {
    step("branches: delete");
    const deleted = await api.deleteProjectBranch({ projectId, branchId: bareId });
    expect(deleted.data.branch.id).toBe(bareId);
    expect((await api.listProjectBranches({ projectId })).data.branches.map((b) => b.id)).not.toContain(
      bareId,
    );

    step("projects: delete");
    expect((await api.deleteProject(otherProjectId)).data.project.id).toBe(otherProjectId);
    expect((await api.deleteProject(projectId)).data.project.id).toBe(projectId);
    step("projects: get deleted (404)");
    const missing = await statusOf(api.getProject(projectId));
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      code: expect.any(String),
      message: expect.stringContaining(projectId),
    });
    expect((await api.listProjects({})).data.projects).toEqual([]);

    step("projects: recoverable list, recover, delete again");
    const recoverable = await api.listProjects({ recoverable: true });
    expect(recoverable.data.projects.map((p) => p.id).sort()).toEqual([otherProjectId, projectId].sort());
    const recovered = await api.recoverProject(otherProjectId);
    expect(recovered.data.project.id).toBe(otherProjectId);
    expect(recovered.data.branches.length).toBeGreaterThan(0);
    expect((await api.getProject(otherProjectId)).data.project.id).toBe(otherProjectId);
    expect((await api.deleteProject(otherProjectId)).data.project.id).toBe(otherProjectId);
  });

  it("covered every /api/v2 operation the server serves", async () => {
    const served = (await (await fetch(`${e2e.server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const servedIds = Object.entries(served.paths)
      .flatMap(([, item]) => Object.values(item).map((op) => op.operationId))
      .filter((id): id is string => typeof id === "string");
    const reached = publicContract().operationIdsOf(e2e.traffic);
    // The SDK can call only what the public document has (served extras, e.g. branch logs, have their own tests).
    const callable = publicContract().operationIds();
    expect(servedIds.filter((id) => callable.has(id) && !reached.has(id))).toEqual([]);
  });

  it("every response the SDK received matches the public OpenAPI contract", () => {
    expect(publicContract().checkAll(e2e.traffic)).toEqual([]);
  });
});
