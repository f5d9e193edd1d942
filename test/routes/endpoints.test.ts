import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { projects } from "../../src/control-plane/projects/table.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let mainId: string;
let mainEndpoint: string;
beforeEach(async () => {
  t = createTestApp();
  const res = await t.api("POST", "/api/v2/projects", { project: {} });
  projectId = res.body.project.id;
  mainId = res.body.branch.id;
  mainEndpoint = res.body.endpoints[0].id;
  t.advance(5); // project and endpoint creation finish
});
afterEach(() => t.close());

const eps = () => `/api/v2/projects/${projectId}/endpoints`;
async function branch(name: string): Promise<string> {
  const res = await t.api("POST", `/api/v2/projects/${projectId}/branches`, { branch: { name } });
  expectStatus(res, 201);
  return res.body.branch.id;
}
async function endpointCount(): Promise<number> {
  return (await t.api("GET", eps())).body.endpoints.length;
}

describe("POST /projects/{p}/endpoints", () => {
  it("creates an endpoint in init heading for active, with a running start_compute", async () => {
    const br = await branch("dev");
    t.advance(1);
    const res = await t.api("POST", eps(), { endpoint: { branch_id: br, type: "read_write" } });
    expectStatus(res, 201);
    expect(res.body.endpoint).toMatchObject({
      branch_id: br,
      project_id: projectId,
      type: "read_write",
      current_state: "init",
      pending_state: "active",
      autoscaling_limit_min_cu: 0.25,
      autoscaling_limit_max_cu: 0.25,
      suspend_timeout_seconds: 0,
      pooler_enabled: false,
      pooler_mode: "transaction",
      disabled: false,
      passwordless_access: false,
      provisioner: "k8s-neonvm",
      creation_source: expect.any(String),
      settings: { pg_settings: {} },
    });
    expect(res.body.endpoint.id).toMatch(/^ep-[a-z]+-[a-z]+-[a-z0-9]{8}$/);
    expect(res.body.endpoint).not.toHaveProperty("last_active");
    expect(res.body.operations).toEqual([
      expect.objectContaining({
        action: "start_compute",
        status: "running",
        endpoint_id: res.body.endpoint.id,
        branch_id: br,
      }),
    ]);
  });

  it("rule 1: a second read_write endpoint on a branch is a 409 that writes nothing", async () => {
    const before = await endpointCount();
    const res = await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_write" } });
    expectStatus(res, 409);
    expect(res.body.message).toContain(mainId);
    expect(await endpointCount()).toBe(before);
  });

  it("rule 2: several read_only endpoints per branch on the paid plan", async () => {
    for (let i = 0; i < 3; i++)
      expectStatus(await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_only" } }), 201);
    expect(await endpointCount()).toBe(4);
  });

  it("accepts every compute size fixed and autoscaling, and rejects anything else naming the sizes", async () => {
    for (const [min, max] of [
      [0.25, 0.25],
      [0.5, 7],
      [1, 2],
      [7, 7],
    ]) {
      const res = await t.api("POST", eps(), {
        endpoint: {
          branch_id: mainId,
          type: "read_only",
          autoscaling_limit_min_cu: min,
          autoscaling_limit_max_cu: max,
        },
      });
      expectStatus(res, 201);
      expect(res.body.endpoint).toMatchObject({
        autoscaling_limit_min_cu: min,
        autoscaling_limit_max_cu: max,
      });
    }
    const before = await endpointCount();
    for (const [min, max] of [
      [0.3, 1],
      [1, 8],
      [0, 1],
      [2, 1],
      [1.5, 2],
    ]) {
      const res = await t.api("POST", eps(), {
        endpoint: {
          branch_id: mainId,
          type: "read_only",
          autoscaling_limit_min_cu: min,
          autoscaling_limit_max_cu: max,
        },
      });
      expectStatus(res, 400);
      expect(res.body.message).toMatch(/autoscaling_limit_m(in|ax)_cu/);
      if (min !== 2) expect(res.body.message).toContain("0.25, 0.5, 1, 2, 3, 4, 5, 6, 7");
    }
    expect(await endpointCount()).toBe(before);
  });

  it("validates suspend_timeout_seconds: -1, 0 and up to 604800 only", async () => {
    for (const s of [-1, 0, 1, 604800]) {
      const res = await t.api("POST", eps(), {
        endpoint: { branch_id: mainId, type: "read_only", suspend_timeout_seconds: s },
      });
      expectStatus(res, 201);
      expect(res.body.endpoint.suspend_timeout_seconds).toBe(s);
    }
    for (const s of [-2, 604801, 1.5, "300"]) {
      const res = await t.api("POST", eps(), {
        endpoint: { branch_id: mainId, type: "read_only", suspend_timeout_seconds: s },
      });
      expectStatus(res, 400);
      expect(res.body.message).toContain("suspend_timeout_seconds");
    }
  });

  it("rejects unknown and other-project branches, bad types and missing fields", async () => {
    expectStatus(
      await t.api("POST", eps(), { endpoint: { branch_id: "br-none-00000000", type: "read_write" } }),
      404,
    );
    const other = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(
      await t.api("POST", eps(), { endpoint: { branch_id: other.body.branch.id, type: "read_only" } }),
      404,
    );
    const badType = await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_many" } });
    expectStatus(badType, 400);
    expect(badType.body.message).toContain("endpoint.type");
    const missing = await t.api("POST", eps(), { endpoint: { type: "read_write" } });
    expectStatus(missing, 400);
    expect(missing.body.message).toContain("endpoint.branch_id");
    expectStatus(
      await t.api("POST", "/api/v2/projects/no-such/endpoints", {
        endpoint: { branch_id: mainId, type: "read_write" },
      }),
      404,
    );
  });

  it("answers 423 on a locked project and writes nothing", async () => {
    const before = await endpointCount();
    t.ctx.db.update(projects).set({ locked: true }).where(eq(projects.id, projectId)).run();
    const res = await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_only" } });
    expectStatus(res, 423);
    expect(res.body.message).toContain("locked");
    t.ctx.db.update(projects).set({ locked: false }).where(eq(projects.id, projectId)).run();
    expect(await endpointCount()).toBe(before);
    expectStatus(await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_only" } }), 201);
  });
});

describe("free plan", () => {
  it("refuses read replicas and any compute other than 0.25 CU", async () => {
    const free = createTestApp({ plan: "free" });
    try {
      const p = await free.api("POST", "/api/v2/projects", { project: {} });
      expectStatus(p, 201);
      const url = `/api/v2/projects/${p.body.project.id}/endpoints`;
      const replica = await free.api("POST", url, {
        endpoint: { branch_id: p.body.branch.id, type: "read_only" },
      });
      expectStatus(replica, 422);
      expect(replica.body.message).toMatch(/paid plan/);
      const br = await free.api("POST", `/api/v2/projects/${p.body.project.id}/branches`, {});
      const big = await free.api("POST", url, {
        endpoint: { branch_id: br.body.branch.id, type: "read_write", autoscaling_limit_max_cu: 1 },
      });
      expectStatus(big, 422);
      expect(big.body.message).toMatch(/0\.25/);
      expectStatus(
        await free.api("POST", url, { endpoint: { branch_id: br.body.branch.id, type: "read_write" } }),
        201,
      );
    } finally {
      free.close();
    }
  });
});

describe("GET list and single", () => {
  it("omits pending_state in lists and shows it on single reads while an operation is under way", async () => {
    const res = await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_only" } });
    const list = await t.api("GET", eps());
    expectStatus(list, 200);
    for (const e of list.body.endpoints) expect(e).not.toHaveProperty("pending_state");
    const one = await t.api("GET", `${eps()}/${res.body.endpoint.id}`);
    expect(one.body.endpoint.pending_state).toBe("active");
    const active = await t.api("GET", `${eps()}/${mainEndpoint}`);
    expect(active.body.endpoint).toMatchObject({ current_state: "active", last_active: expect.any(String) });
    expect(active.body.endpoint).not.toHaveProperty("pending_state");
    expectStatus(await t.api("GET", `${eps()}/ep-missing-00000000`), 404);
  });
});

describe("PATCH /projects/{p}/endpoints/{e}", () => {
  it("reassigns to a free branch: apply_config running and suspend_compute scheduling (spec example)", async () => {
    const br = await branch("dev");
    t.advance(1);
    const res = await t.api("PATCH", `${eps()}/${mainEndpoint}`, { endpoint: { branch_id: br } });
    expectStatus(res, 200);
    expect(res.body.endpoint).toMatchObject({ branch_id: br, pending_state: "idle" });
    expect(res.body.operations.map((o: { action: string; status: string }) => [o.action, o.status])).toEqual([
      ["apply_config", "running"],
      ["suspend_compute", "scheduling"],
    ]);
    // The old branch is free again; the new one is taken.
    expectStatus(await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_write" } }), 201);
    const taken = await t.api("PATCH", `${eps()}/${mainEndpoint}`, { endpoint: { branch_id: mainId } });
    expectStatus(taken, 409);
    expect((await t.api("GET", `${eps()}/${mainEndpoint}`)).body.endpoint.branch_id).toBe(br);
  });

  it("restarts a running endpoint on a compute size change, but not on an auto-suspend change", async () => {
    const size = await t.api("PATCH", `${eps()}/${mainEndpoint}`, {
      endpoint: { autoscaling_limit_min_cu: 1, autoscaling_limit_max_cu: 2 },
    });
    expectStatus(size, 200);
    expect(size.body.endpoint).toMatchObject({
      autoscaling_limit_min_cu: 1,
      autoscaling_limit_max_cu: 2,
      pending_state: "active",
    });
    expect(size.body.operations.map((o: { action: string }) => o.action)).toEqual([
      "apply_config",
      "suspend_compute",
      "start_compute",
    ]);
    t.advance(5);
    const suspend = await t.api("PATCH", `${eps()}/${mainEndpoint}`, {
      endpoint: { suspend_timeout_seconds: 900 },
    });
    expect(suspend.body.operations.map((o: { action: string }) => o.action)).toEqual(["apply_config"]);
    expect(suspend.body.endpoint.suspend_timeout_seconds).toBe(900);
  });

  it("changes pooler, pg_settings, name and disabled; disabling suspends", async () => {
    const res = await t.api("PATCH", `${eps()}/${mainEndpoint}`, {
      endpoint: {
        pooler_enabled: true,
        name: "primary",
        settings: { pg_settings: { work_mem: "64MB" } },
        disabled: true,
      },
    });
    expectStatus(res, 200);
    expect(res.body.endpoint).toMatchObject({
      pooler_enabled: true,
      name: "primary",
      disabled: true,
      settings: { pg_settings: { work_mem: "64MB" } },
    });
    expect(res.body.operations.map((o: { action: string }) => o.action)).toEqual([
      "apply_config",
      "suspend_compute",
    ]);
  });

  it("refuses pg_settings that reach the host (commands, libraries, files, listening, logs) with 400 naming the setting", async () => {
    const before = (await t.api("GET", `${eps()}/${mainEndpoint}`)).body.endpoint;
    const cases: [Record<string, string>, string][] = [
      [
        { archive_command: "touch /tmp/owned" },
        "archive_command cannot be set on a compute: it runs commands on the host",
      ],
      [{ ARCHIVE_MODE: "on" }, "ARCHIVE_MODE cannot be set on a compute: it runs commands on the host"],
      [{ ssl_passphrase_command: "sh -c x" }, "runs commands on the host"],
      [{ shared_preload_libraries: "/tmp/x.so" }, "settings.preload_libraries"],
      [{ dynamic_library_path: "/tmp" }, "loads code on the host"],
      [{ hba_file: "/etc/passwd" }, "names a file on the host"],
      [{ ssl_key_file: "/root/key" }, "names a file on the host"],
      // A compute's settings are a configuration file's lines: its directives would read another file.
      [{ include: "/etc/passwd" }, "is a configuration file directive that reads a file on the host"],
      [{ Include_Dir: "/etc" }, "is a configuration file directive that reads a file on the host"],
      [{ include_if_exists: "/x" }, "is a configuration file directive that reads a file on the host"],
      [{ listen_addresses: "*" }, "changes where the server listens"],
      [{ ssl: "on" }, "depends on the host"],
      [{ huge_pages: "on" }, "depends on the host"],
      [{ synchronous_standby_names: "*" }, "makes commits wait for standbys"],
      [{ log_min_duration_statement: "0" }, "is a server log setting"],
      [{ "work_mem; x": "1" }, '"work_mem; x" is not a Postgres setting name'],
      [{ "a=b": "1" }, "is not a Postgres setting name"],
    ];
    for (const [pg_settings, message] of cases) {
      const res = await t.api("PATCH", `${eps()}/${mainEndpoint}`, {
        endpoint: { settings: { pg_settings } },
      });
      expectStatus(res, 400);
      expect(res.body.message).toContain(message);
    }
    const defaults = await t.api("PATCH", `/api/v2/projects/${projectId}`, {
      project: { default_endpoint_settings: { pg_settings: { restore_command: "cp x y" } } },
    });
    expectStatus(defaults, 400);
    expect(defaults.body.message).toContain("restore_command cannot be set on a compute");
    const created = await t.api("POST", eps(), {
      endpoint: { branch_id: mainId, type: "read_only", settings: { pg_settings: { port: "5" } } },
    });
    expectStatus(created, 400);
    expect(await endpointCount()).toBe(1);
    expect((await t.api("GET", `${eps()}/${mainEndpoint}`)).body.endpoint).toEqual(before);
    // Ordinary and custom settings are taken.
    const ok = await t.api("PATCH", `${eps()}/${mainEndpoint}`, {
      endpoint: {
        settings: { pg_settings: { work_mem: "8MB", "app.tenant": "acme", wal_level: "logical" } },
      },
    });
    expectStatus(ok, 200);
    expect(ok.body.endpoint.settings.pg_settings).toEqual({
      work_mem: "8MB",
      "app.tenant": "acme",
      wal_level: "logical",
    });
  });

  it("refuses connections reserved for superusers that leave none of the compute size's max_connections, also on a resize down", async () => {
    const url = `${eps()}/${mainEndpoint}`;
    const reserved = (value: string) => ({ pg_settings: { superuser_reserved_connections: value } });
    const tooMany = await t.api("PATCH", url, { endpoint: { settings: reserved("112") } });
    expectStatus(tooMany, 400);
    expect(tooMany.body.message).toBe(
      'pg_settings: "superuser_reserved_connections" (112) plus "reserved_connections" (0) must be less than "max_connections" (112, a 0.25 CU compute\'s)',
    );
    const withOthers = await t.api("PATCH", url, {
      endpoint: {
        settings: { pg_settings: { superuser_reserved_connections: "100", reserved_connections: "12" } },
      },
    });
    expectStatus(withOthers, 400);
    // A bigger compute has room for them; made smaller again, it would not start.
    const bigger = await t.api("PATCH", url, {
      endpoint: { autoscaling_limit_min_cu: 1, autoscaling_limit_max_cu: 1, settings: reserved("200") },
    });
    expectStatus(bigger, 200);
    const smaller = await t.api("PATCH", url, {
      endpoint: { autoscaling_limit_min_cu: 0.25, autoscaling_limit_max_cu: 1 },
    });
    expectStatus(smaller, 400);
    expect(smaller.body.message).toContain('"max_connections" (112, a 0.25 CU compute\'s)');
    const after = (await t.api("GET", url)).body.endpoint;
    expect([after.autoscaling_limit_min_cu, after.settings.pg_settings]).toEqual([
      1,
      reserved("200").pg_settings,
    ]);
    // New endpoints take the project's defaults, checked at their size.
    const defaults = await t.api("PATCH", `/api/v2/projects/${projectId}`, {
      project: { default_endpoint_settings: { pg_settings: { superuser_reserved_connections: "300" } } },
    });
    expectStatus(defaults, 200);
    const small = await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_only" } });
    expectStatus(small, 400);
    const big = await t.api("POST", eps(), {
      endpoint: {
        branch_id: mainId,
        type: "read_only",
        autoscaling_limit_min_cu: 1,
        autoscaling_limit_max_cu: 1,
      },
    });
    expectStatus(big, 201);
  });

  it("rejects invalid changes with 400 and leaves the endpoint untouched", async () => {
    const before = (await t.api("GET", `${eps()}/${mainEndpoint}`)).body.endpoint;
    for (const endpoint of [
      { autoscaling_limit_min_cu: 3 }, // above the current max of 0.25
      { autoscaling_limit_max_cu: 10 },
      { suspend_timeout_seconds: 999999 },
      { pooler_mode: "session" },
      { disabled: "yes" },
    ])
      expectStatus(await t.api("PATCH", `${eps()}/${mainEndpoint}`, { endpoint }), 400);
    expectStatus(await t.api("PATCH", `${eps()}/${mainEndpoint}`, {}), 400);
    expectStatus(
      await t.api("PATCH", `${eps()}/${mainEndpoint}`, { endpoint: { branch_id: "br-none-00000000" } }),
      404,
    );
    const after = (await t.api("GET", `${eps()}/${mainEndpoint}`)).body.endpoint;
    expect(after).toEqual(before);
  });
});

describe("DELETE /projects/{p}/endpoints/{e}", () => {
  it("answers with the endpoint as it was and an empty operations array; the branch is free again", async () => {
    const before = (await t.api("GET", `${eps()}/${mainEndpoint}`)).body.endpoint;
    const res = await t.api("DELETE", `${eps()}/${mainEndpoint}`);
    expectStatus(res, 200);
    expect(res.body.operations).toEqual([]);
    expect(res.body.endpoint).toEqual(before);
    expectStatus(await t.api("GET", `${eps()}/${mainEndpoint}`), 404);
    expectStatus(await t.api("DELETE", `${eps()}/${mainEndpoint}`), 404);
    expectStatus(await t.api("POST", eps(), { endpoint: { branch_id: mainId, type: "read_write" } }), 201);
  });
});

describe("start, suspend, restart", () => {
  const post = (verb: string, headers: Record<string, string> = {}) =>
    t.request("POST", `${eps()}/${mainEndpoint}/${verb}`, headers["content-type"] ? "" : undefined, {
      authorization: `Bearer ${t.key}`,
      ...headers,
    });

  it("suspend, start and restart return the endpoint with their operations, with any content type", async () => {
    const suspend = await post("suspend", { "content-type": "text/plain" });
    expectStatus(suspend, 200);
    expect(suspend.body.operations.map((o: { action: string }) => o.action)).toEqual(["suspend_compute"]);
    expect(suspend.body.endpoint.pending_state).toBe("idle");
    t.advance(5);
    expect((await t.api("GET", `${eps()}/${mainEndpoint}`)).body.endpoint.current_state).toBe("idle");
    const start = await post("start", { "content-type": "application/json" });
    expect(start.body.operations.map((o: { action: string }) => o.action)).toEqual(["start_compute"]);
    t.advance(5);
    expect((await t.api("GET", `${eps()}/${mainEndpoint}`)).body.endpoint.current_state).toBe("active");
    const restart = await post("restart");
    expect(
      restart.body.operations.map((o: { action: string; status: string }) => [o.action, o.status]),
    ).toEqual([
      ["suspend_compute", "running"],
      ["start_compute", "scheduling"],
    ]);
  });

  it("a disabled endpoint refuses start and restart with 409", async () => {
    await t.api("PATCH", `${eps()}/${mainEndpoint}`, { endpoint: { disabled: true } });
    const res = await post("start");
    expectStatus(res, 409);
    expect(res.body.message).toMatch(/disabled/);
    expectStatus(await post("restart"), 409);
    expectStatus(await t.api("POST", `${eps()}/ep-none-00000000/start`), 404);
  });
});

describe("list cache", () => {
  it("reflects every change at once: create, update, worker transitions, cascades and deletes", async () => {
    const list = async () =>
      (await t.api("GET", eps())).body.endpoints.map(
        (e: { id: string; current_state: string; name?: string }) => [e.id, e.current_state, e.name ?? null],
      );
    const first = await list();
    expect(first).toEqual([[mainEndpoint, "active", null]]);
    expect(await list()).toEqual(first); // served again unchanged
    await t.api("PATCH", `${eps()}/${mainEndpoint}`, { endpoint: { name: "renamed" } });
    expect((await list())[0]).toEqual([mainEndpoint, "active", "renamed"]);
    const dev = await t.api("POST", `/api/v2/projects/${projectId}/branches`, {
      endpoints: [{ type: "read_write" }],
    });
    const devEp = dev.body.endpoints[0].id;
    expect(await list()).toEqual([
      [mainEndpoint, "active", "renamed"],
      [devEp, "init", null],
    ]);
    t.advance(2); // the worker's transition is a write like any other
    expect((await list())[1]).toEqual([devEp, "active", null]);
    await t.api("DELETE", `/api/v2/projects/${projectId}/branches/${dev.body.branch.id}`); // cascades
    expect(await list()).toEqual([[mainEndpoint, "active", "renamed"]]);
    await t.api("DELETE", `${eps()}/${mainEndpoint}`);
    expect(await list()).toEqual([]);
  });
});
