import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicContract } from "./contract.js";
import { type E2E, startE2E } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: CLI output is asserted field by field
type Json = any;

/**
 * Commands of npm `neon` 6.x that neonctl 5 does not have, or that reach the routes added for
 * it: status and env pull (which read every product's state), neon-auth, data-api, organization
 * and project-scoped API keys, VPC endpoints and restrictions. Each against the compiled server.
 */
describe("neon 6 commands beyond neonctl 5", { timeout: 60_000 }, () => {
  let e2e: E2E;
  let projectId = "";
  let branchId = "";
  let orgId = "";

  const runJson = (step: string, args: string[]): Promise<Json> => {
    e2e.step(`neon6: ${step}`);
    return e2e.neonJson(args);
  };
  const run = (step: string, args: string[]) => {
    e2e.step(`neon6: ${step}`);
    return e2e.neon(args);
  };

  beforeAll(async () => {
    // A branch takes 4 s to create: long enough for a change right after it to meet a 423 (below).
    e2e = await startE2E({ NEON_EMULATOR_OPERATION_MS: "create_branch=4000" }, "neon 6");
    const created = await runJson("projects create", ["projects", "create", "--name", "neon6"]);
    projectId = created.project.id;
    orgId = created.project.org_id;
    const branches = await runJson("branches list", ["branches", "list", "--project-id", projectId]);
    branchId = branches[0].id;
  });
  afterAll(async () => {
    await e2e?.close();
  });

  it("status reads every product's state (none enabled) and shows the project and branch", async () => {
    const status = await runJson("status", ["status", "--project-id", projectId]);
    expect(status.project).toMatchObject({ id: projectId, name: "neon6", region: "aws-us-east-2", orgId });
    expect(status.branch).toMatchObject({ id: branchId, name: "main", isDefault: true });
  });

  it("env pull writes the branch's connection strings", async () => {
    const file = "pulled.env";
    await run("env pull", ["env", "pull", "--project-id", projectId, "--file", file]);
    const text = await import("node:fs").then((fs) => fs.readFileSync(`${e2e.cwd}/${file}`, "utf8"));
    expect(text).toMatch(/^DATABASE_URL="postgresql:\/\/neondb_owner:[^@]+@ep-[a-z0-9-]+-pooler\./m);
    expect(text).toMatch(/^DATABASE_URL_UNPOOLED="postgresql:\/\/neondb_owner:/m);
    expect(text).toMatch(/^NEON_BRANCH=main$/m);
  });

  it("neon-auth status says Neon Auth is not configured; data-api get says the Data API is not enabled", async () => {
    expect(await run("neon-auth status", ["neon-auth", "status", "--project-id", projectId])).toContain(
      "Neon Auth is not configured for this branch",
    );
    await expect(run("data-api get", ["data-api", "get", "--project-id", projectId])).rejects.toThrow(
      `Data API is not enabled for database neondb on branch ${branchId}`,
    );
  });

  it("api-keys: a project-scoped key is listed with its project and sees that project only", async () => {
    const key = await runJson("api-keys create", [
      "api-keys",
      "create",
      "--name",
      "scoped",
      "--project-id",
      projectId,
    ]);
    expect(key).toMatchObject({ name: "scoped", project_id: projectId });
    const listed = await runJson("api-keys list --org-id", ["api-keys", "list", "--org-id", orgId]);
    expect(listed.map((k: Json) => [k.name, k.project_id])).toEqual([["scoped", projectId]]);
    const scoped = await fetch(`${e2e.apiBase}/projects`, {
      headers: { authorization: `Bearer ${key.key}` },
    });
    expect(((await scoped.json()) as Json).projects.map((p: Json) => p.id)).toEqual([projectId]);
    await run("api-keys revoke", ["api-keys", "revoke", String(key.id), "--org-id", orgId]);
    expect(
      await runJson("api-keys list --org-id (after revoke)", ["api-keys", "list", "--org-id", orgId]),
    ).toEqual([]);
  });

  it("vpc: an endpoint assigned to the organization restricts the project, then both are removed", async () => {
    const org = ["--org-id", orgId, "--region-id", "aws-us-east-2"];
    await run("vpc endpoint assign", [
      "vpc",
      "endpoint",
      "assign",
      "vpce-0123abcd",
      "--label",
      "prod",
      ...org,
    ]);
    expect(await runJson("vpc endpoint list", ["vpc", "endpoint", "list", ...org])).toEqual([
      { vpc_endpoint_id: "vpce-0123abcd", label: "prod" },
    ]);
    await run("vpc project restrict", [
      "vpc",
      "project",
      "restrict",
      "vpce-0123abcd",
      "--project-id",
      projectId,
    ]);
    expect(await runJson("vpc project list", ["vpc", "project", "list", "--project-id", projectId])).toEqual([
      { vpc_endpoint_id: "vpce-0123abcd", label: "" },
    ]);
    const details = await runJson("vpc endpoint status", [
      "vpc",
      "endpoint",
      "status",
      "vpce-0123abcd",
      ...org,
    ]);
    expect(details).toMatchObject({ state: "accepted", example_restricted_projects: [projectId] });
    await run("vpc project remove", ["vpc", "project", "remove", "vpce-0123abcd", "--project-id", projectId]);
    await run("vpc endpoint remove", ["vpc", "endpoint", "remove", "vpce-0123abcd", ...org]);
    expect(await runJson("vpc endpoint list (after)", ["vpc", "endpoint", "list", ...org])).toEqual([]);
  });

  it("projects: a deleted project is listed as recoverable and comes back with projects recover", async () => {
    const made = await runJson("projects create (to delete)", [
      "projects",
      "create",
      "--name",
      "short-lived",
    ]);
    const id = made.project.id;
    await runJson("projects delete", ["projects", "delete", id]);
    const listed = await runJson("projects list --recoverable-only", [
      "projects",
      "list",
      "--recoverable-only",
    ]);
    expect(listed).toEqual([
      expect.objectContaining({
        id,
        name: "short-lived",
        deleted_at: expect.any(String),
        recoverable_until: expect.any(String),
      }),
    ]);
    const recovered = await runJson("projects recover", ["projects", "recover", id]);
    expect(recovered).toMatchObject({ id, name: "short-lived" });
    expect(await runJson("projects get (recovered)", ["projects", "get", id])).toMatchObject({ id });
    expect(
      await runJson("projects list --recoverable-only (empty)", ["projects", "list", "--recoverable-only"]),
    ).toEqual([]);
  });

  it("retries a change the API answers 423 (the branch is still being created) until it goes through", async () => {
    e2e.step("create a branch (4 s create_branch)");
    const made = await fetch(`${e2e.apiBase}/projects/${projectId}/branches`, {
      method: "POST",
      headers: { authorization: `Bearer ${e2e.key}`, "content-type": "application/json" },
      body: JSON.stringify({ branch: { name: "slow" } }),
    });
    expect(made.status).toBe(201);
    const slowId = ((await made.json()) as Json).branch.id;
    const role = await runJson("roles create (retried on 423)", [
      "roles",
      "create",
      "--project-id",
      projectId,
      "--branch",
      slowId,
      "--name",
      "retried",
    ]);
    expect(role).toMatchObject({ name: "retried", branch_id: slowId });
    const attempts = e2e.traffic
      .filter((x) => x.method === "POST" && x.path.endsWith(`/branches/${slowId}/roles`))
      .map((x) => x.status);
    expect(attempts[0]).toBe(423);
    expect(attempts.slice(0, -1).every((s) => s === 423)).toBe(true);
    expect(attempts.at(-1)).toBe(201);
    const roles = await runJson("roles list", [
      "roles",
      "list",
      "--project-id",
      projectId,
      "--branch",
      slowId,
    ]);
    expect(roles.map((r: { name: string }) => r.name)).toContain("retried");
  });

  it("every response the CLI received matches the public OpenAPI contract", () => {
    expect(publicContract().checkAll(e2e.traffic)).toEqual([]);
  });
});
