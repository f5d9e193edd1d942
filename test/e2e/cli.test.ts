import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicContract } from "./contract.js";
import { type E2E, NEON_CLIS, type NeonCli, startE2E, waitFor } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: CLI output is asserted field by field
type Json = any;

/**
 * The real CLIs (npm `neon` 6.x, and `neonctl` 5) against the compiled server, one command at a
 * time, asserting on what each printed. The steps share one server and build on each other.
 */
describe.each(Object.keys(NEON_CLIS) as NeonCli[])("%s against the emulator", { timeout: 60_000 }, (cli) => {
  let e2e: E2E;
  let projectId = "";
  let mainId = "";
  let devId = "";
  let devEndpoint: Json;
  let bareId = "";
  let bareEndpointId = "";
  let password = "";
  let apiBranchName = "";

  const run = (step: string, args: string[]) => {
    e2e.step(`cli: ${step}`);
    return e2e.neon(args);
  };
  const runJson = (step: string, args: string[]): Promise<Json> => {
    e2e.step(`cli: ${step}`);
    return e2e.neonJson(args);
  };
  /** A direct GET through the recording proxy (for polling; faster than a CLI process per poll). */
  const get = async (path: string): Promise<Json> => {
    const res = await fetch(`${e2e.apiBase}${path}`, { headers: { authorization: `Bearer ${e2e.key}` } });
    expect(res.status, await res.clone().text()).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    e2e = await startE2E({ NEON_EMULATOR_OPERATION_MS: "start_compute=200,suspend_compute=100" }, cli);
  });
  afterAll(async () => {
    await e2e?.close();
  });

  it("me shows the account the key belongs to", async () => {
    const me = await runJson("me", ["me"]);
    expect(me).toMatchObject({ email: "user@example.com", plan: "scale_v3" });
    expect(typeof me.id).toBe("string");
  });

  it("orgs list shows the account's organization", async () => {
    const orgs = await runJson("orgs list", ["orgs", "list"]);
    expect(orgs).toHaveLength(1);
    expect(orgs[0].id).toMatch(/^org-/);
  });

  it("projects create makes a project with a default branch, role, database and compute", async () => {
    const out = await runJson("projects create", [
      "projects",
      "create",
      "--name",
      "e2e-cli",
      "--cu",
      "0.25-1",
    ]);
    expect(out.project).toMatchObject({ name: "e2e-cli", region_id: "aws-us-east-2", pg_version: 17 });
    expect(out.project.default_endpoint_settings).toMatchObject({
      autoscaling_limit_min_cu: 0.25,
      autoscaling_limit_max_cu: 1,
    });
    projectId = out.project.id;
    const params = out.connection_uris[0].connection_parameters;
    expect(params).toMatchObject({ database: "neondb", role: "neondb_owner" });
    password = params.password;
    expect(out.connection_uris[0].connection_uri).toBe(
      `postgresql://neondb_owner:${password}@${params.host}/neondb?sslmode=require`,
    );
  });

  it("projects get and update show and rename the project", async () => {
    const got = await runJson("projects get", ["projects", "get", projectId]);
    expect(got).toMatchObject({ id: projectId, name: "e2e-cli" });
    const updated = await runJson("projects update", [
      "projects",
      "update",
      projectId,
      "--name",
      "e2e-renamed",
    ]);
    expect(updated).toMatchObject({ id: projectId, name: "e2e-renamed" });
    const list = await runJson("projects list", ["projects", "list"]);
    expect(list.projects.map((p: Json) => [p.id, p.name])).toEqual([[projectId, "e2e-renamed"]]);
  });

  it("branches list shows the default branch", async () => {
    const branches = await runJson("branches list", ["branches", "list", "--project-id", projectId]);
    expect(branches).toHaveLength(1);
    expect(branches[0]).toMatchObject({ name: "main", default: true, project_id: projectId });
    mainId = branches[0].id;
  });

  it("branches create (with a compute) makes a child of the default branch with a read_write endpoint", async () => {
    const out = await runJson("branches create", [
      "branches",
      "create",
      "--project-id",
      projectId,
      "--name",
      "dev",
      "--cu",
      "0.5-2",
      "--suspend-timeout",
      "60",
    ]);
    expect(out.branch).toMatchObject({ name: "dev", parent_id: mainId, default: false });
    devId = out.branch.id;
    expect(out.endpoints).toHaveLength(1);
    devEndpoint = out.endpoints[0];
    expect(devEndpoint).toMatchObject({
      branch_id: devId,
      type: "read_write",
      autoscaling_limit_min_cu: 0.5,
      autoscaling_limit_max_cu: 2,
      suspend_timeout_seconds: 60,
      current_state: "init",
      pending_state: "active",
    });
    expect(out.connection_uris[0].connection_uri).toContain(`@${devEndpoint.host}/neondb`);
  });

  it("branches create --no-compute makes a branch without an endpoint", async () => {
    const branch = await runJson("branches create --no-compute", [
      "branches",
      "create",
      "--project-id",
      projectId,
      "--name",
      "bare",
      "--no-compute",
    ]);
    expect(branch).toMatchObject({ name: "bare", parent_id: mainId });
    expect(branch.endpoints).toBeUndefined();
    bareId = branch.id;
    const endpoints = await get(`/projects/${projectId}/branches/${bareId}/endpoints`);
    expect(endpoints.endpoints).toEqual([]);
  });

  it("branches get, rename and set-default", async () => {
    const got = await runJson("branches get", ["branches", "get", "dev", "--project-id", projectId]);
    expect(got).toMatchObject({ id: devId, name: "dev", parent_id: mainId });
    const renamed = await runJson("branches rename", [
      "branches",
      "rename",
      "dev",
      "feature",
      "--project-id",
      projectId,
    ]);
    expect(renamed).toMatchObject({ id: devId, name: "feature" });
    const def = await runJson("branches set-default", [
      "branches",
      "set-default",
      "feature",
      "--project-id",
      projectId,
    ]);
    expect(def).toMatchObject({ id: devId, name: "feature", default: true });
    const { branches } = await get(`/projects/${projectId}/branches`);
    expect(branches.map((b: Json) => [b.name, b.default]).sort()).toEqual([
      ["bare", false],
      ["feature", true],
      ["main", false],
    ]);
  });

  it("branches add-compute gives the bare branch an endpoint", async () => {
    const endpoint = await runJson("branches add-compute", [
      "branches",
      "add-compute",
      "bare",
      "--project-id",
      projectId,
      "--type",
      "read_write",
      "--cu",
      "0.25",
    ]);
    expect(endpoint).toMatchObject({
      branch_id: bareId,
      type: "read_write",
      autoscaling_limit_min_cu: 0.25,
      autoscaling_limit_max_cu: 0.25,
    });
    bareEndpointId = endpoint.id;
    expect(endpoint.host).toContain(bareEndpointId);
  });

  it("connection-string points at the default branch's endpoint, plain and pooled", async () => {
    const plain = (await run("connection-string", ["connection-string", "--project-id", projectId])).trim();
    const url = new URL(plain);
    expect(url.protocol).toBe("postgresql:");
    expect(url.username).toBe("neondb_owner");
    expect(url.password).toBe(password);
    expect(url.hostname).toBe(devEndpoint.host);
    expect(url.pathname).toBe("/neondb");
    expect(url.searchParams.get("sslmode")).toBe("require");
    const pooled = new URL(
      (
        await run("connection-string --pooled", ["connection-string", "--project-id", projectId, "--pooled"])
      ).trim(),
    );
    expect(pooled.hostname).toBe(devEndpoint.host.replace(devEndpoint.id, `${devEndpoint.id}-pooler`));
  });

  it("databases list and roles list show what the branch copied from its parent", async () => {
    const dbs = await runJson("databases list", [
      "databases",
      "list",
      "--project-id",
      projectId,
      "--branch",
      "bare",
    ]);
    expect(dbs).toHaveLength(1);
    expect(dbs[0]).toMatchObject({ name: "neondb", owner_name: "neondb_owner", branch_id: bareId });
    const roles = await runJson("roles list", [
      "roles",
      "list",
      "--project-id",
      projectId,
      "--branch",
      "main",
    ]);
    expect(roles).toHaveLength(1);
    expect(roles[0]).toMatchObject({ name: "neondb_owner", branch_id: mainId });
  });

  it("neon api suspends, starts and restarts an endpoint", async () => {
    e2e.step("cli: api (waiting)");
    const base = `/projects/${projectId}/endpoints/${devEndpoint.id}`;
    const stateOf = async () => (await get(base)).endpoint;
    await waitFor("the dev endpoint to become active", async () => {
      const ep = await stateOf();
      return ep.current_state === "active" && ep.pending_state === undefined ? ep : undefined;
    });

    const suspended = await runJson("api suspend", ["api", `${base}/suspend`, "-X", "POST"]);
    expect(suspended.endpoint).toMatchObject({ id: devEndpoint.id, pending_state: "idle" });
    expect(suspended.operations.map((o: Json) => [o.action, o.endpoint_id])).toEqual([
      ["suspend_compute", devEndpoint.id],
    ]);
    await waitFor("the endpoint to become idle", async () =>
      (await stateOf()).current_state === "idle" ? true : undefined,
    );

    const started = await runJson("api start", ["api", `${base}/start`, "-X", "POST"]);
    expect(started.endpoint).toMatchObject({ current_state: "idle", pending_state: "active" });
    expect(started.operations.map((o: Json) => o.action)).toEqual(["start_compute"]);
    await waitFor("the endpoint to become active again", async () => {
      const ep = await stateOf();
      return ep.current_state === "active" && ep.pending_state === undefined ? ep : undefined;
    });

    const restarted = await runJson("api restart", ["api", `${base}/restart`, "-X", "POST"]);
    expect(restarted.operations.map((o: Json) => o.action)).toEqual(["suspend_compute", "start_compute"]);
    const opId = restarted.operations[1].id;
    const op = await waitFor("the restart's start_compute to finish", async () => {
      const o = (await get(`/projects/${projectId}/operations/${opId}`)).operation;
      return o.status === "finished" ? o : undefined;
    });
    expect(op.action).toBe("start_compute");
  });

  it("neon api POSTs without a body where the body is optional (branch create)", async () => {
    const out = await runJson("api create branch", ["api", `/projects/${projectId}/branches`, "-X", "POST"]);
    expect(out.branch).toMatchObject({ parent_id: devId, default: false, name: out.branch.id });
    expect(out.endpoints).toEqual([]);
    expect(out.operations.map((o: Json) => o.action)).toEqual(["create_branch"]);
    apiBranchName = out.branch.name;
  });

  it("operations list shows the project's operations, newest first", async () => {
    const ops = await runJson("operations list", ["operations", "list", "--project-id", projectId]);
    expect(Array.isArray(ops)).toBe(true);
    expect(ops.length).toBeGreaterThan(0);
    expect(ops[0]).toMatchObject({ action: "create_branch" });
    expect(ops[1]).toMatchObject({
      action: "start_compute",
      endpoint_id: devEndpoint.id,
      status: "finished",
    });
    const times = ops.map((o: Json) => o.created_at as string);
    expect([...times].sort().reverse()).toEqual(times);
    for (const o of ops) expect(o.project_id).toBe(projectId);
  });

  it("branches delete removes the branch and its endpoint", async () => {
    const deleted = await runJson("branches delete", [
      "branches",
      "delete",
      "bare",
      "--project-id",
      projectId,
    ]);
    expect(deleted).toMatchObject({ id: bareId, name: "bare" });
    const endpoints = await get(`/projects/${projectId}/endpoints`);
    expect(endpoints.endpoints.map((e: Json) => e.id)).not.toContain(bareEndpointId);
    const { branches } = await get(`/projects/${projectId}/branches`);
    expect(branches.map((b: Json) => b.name).sort()).toEqual([apiBranchName, "feature", "main"].sort());
  });

  it("projects delete removes the project", async () => {
    const deleted = await runJson("projects delete", ["projects", "delete", projectId]);
    expect(deleted).toMatchObject({ id: projectId, name: "e2e-renamed" });
    expect((await get("/projects")).projects).toEqual([]);
  });

  it("every response the CLI received matches the public OpenAPI contract", () => {
    expect(e2e.traffic.length).toBeGreaterThan(20);
    expect(publicContract().checkAll(e2e.traffic)).toEqual([]);
  });
});
