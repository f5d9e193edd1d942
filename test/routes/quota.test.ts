import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

/**
 * Project quotas (settings.quota) on the manual clock: the computes of a project that uses up its
 * active or compute time in the consumption period are suspended at that moment, and no start —
 * through the API or a client — is taken until the quota is raised or the period ends.
 */
let t: TestApp;
beforeEach(() => {
  t = createTestApp();
});
afterEach(() => t.close());

interface Made {
  projectId: string;
  branchId: string;
  endpointId: string;
}

async function project(settings: Record<string, unknown>, minCu = 0.25): Promise<Made> {
  const created = await t.api("POST", "/api/v2/projects", {
    project: {
      name: "quota",
      settings,
      default_endpoint_settings: {
        autoscaling_limit_min_cu: minCu,
        autoscaling_limit_max_cu: Math.max(minCu, 1),
      },
    },
  });
  expectStatus(created, 201);
  t.advance(1); // start_compute finishes: the compute is active from here
  return {
    projectId: created.body.project.id,
    branchId: created.body.branch.id,
    endpointId: created.body.endpoints[0].id,
  };
}

const path = (p: Made, rest = "") => `/api/v2/projects/${p.projectId}${rest}`;
const endpointState = async (p: Made) =>
  (await t.api("GET", path(p, `/endpoints/${p.endpointId}`))).body.endpoint.current_state;
const suspends = async (p: Made) =>
  (await t.api("GET", path(p, "/operations"))).body.operations.filter(
    (o: { action: string }) => o.action === "suspend_compute",
  );

describe("project quotas", () => {
  it("active_time_seconds: the compute is suspended the moment the period's active time reaches it, inside a longer advance", async () => {
    const p = await project({ quota: { active_time_seconds: 100 } });
    const started = t.clock.now();
    t.advance(99);
    expect(await endpointState(p)).toBe("active");
    expect(await suspends(p)).toEqual([]);
    t.advance(3600);
    const [op] = await suspends(p);
    expect(op).toMatchObject({ status: "finished" });
    expect(Date.parse(op.created_at)).toBe(started + 100_000);
    expect(await endpointState(p)).toBe("idle");
    const shown = (await t.api("GET", path(p))).body.project;
    expect(shown.settings.quota).toEqual({ active_time_seconds: 100 });
    expect(shown.active_time_seconds).toBeGreaterThanOrEqual(100);
    expect(shown.active_time_seconds).toBeLessThanOrEqual(101);
  });

  it("a used-up quota refuses every start with 422 and writes nothing; raising it (or 0, unlimited) lets them start", async () => {
    const p = await project({ quota: { active_time_seconds: 10 } });
    t.advance(60);
    expect(await endpointState(p)).toBe("idle");
    const opsBefore = (await t.api("GET", path(p, "/operations"))).body.operations.length;
    const refusals = [
      await t.api("POST", path(p, `/endpoints/${p.endpointId}/start`)),
      await t.api("POST", path(p, `/endpoints/${p.endpointId}/restart`)),
      await t.api("POST", `/_emulator/projects/${p.projectId}/endpoints/${p.endpointId}/connect`),
      await t.api("POST", path(p, "/endpoints"), { endpoint: { branch_id: p.branchId, type: "read_only" } }),
      await t.api("POST", path(p, "/branches"), { endpoints: [{ type: "read_write" }] }),
    ];
    for (const res of refusals) {
      expectStatus(res, 422);
      expect(res.body.code).toBe("ACTIVE_TIME_QUOTA_EXCEEDED");
      expect(res.body.message).toContain("active_time_seconds quota of 10");
    }
    expect((await t.api("GET", path(p, "/endpoints"))).body.endpoints).toHaveLength(1);
    expect((await t.api("GET", path(p, "/branches"))).body.branches).toHaveLength(1);
    expect((await t.api("GET", path(p, "/operations"))).body.operations).toHaveLength(opsBefore);
    // A suspend is still taken, and a branch without a compute can be made.
    expectStatus(await t.api("POST", path(p, `/endpoints/${p.endpointId}/suspend`)), 200);
    expectStatus(await t.api("POST", path(p, "/branches"), { branch: { name: "no-compute" } }), 201);
    t.advance(5);

    expectStatus(
      await t.api("PATCH", path(p), { project: { settings: { quota: { active_time_seconds: 0 } } } }),
      200,
    );
    expectStatus(await t.api("POST", path(p, `/endpoints/${p.endpointId}/start`)), 200);
    t.advance(1);
    expect(await endpointState(p)).toBe("active");
  });

  it("compute_time_seconds counts CU-seconds of every running compute", async () => {
    // Two computes of 0.5 CU: 1 CU-second per second together.
    const p = await project({ quota: { compute_time_seconds: 30 } }, 0.5);
    expectStatus(
      await t.api("POST", path(p, "/endpoints"), {
        endpoint: { branch_id: p.branchId, type: "read_only", autoscaling_limit_min_cu: 0.5 },
      }),
      201,
    );
    t.advance(1);
    // The first compute has run 1 s alone (0.5 CU-s); from here both run: 29.5 s to 30 CU-s.
    const at = t.clock.now();
    t.advance(600);
    const ops = await suspends(p);
    expect(ops).toHaveLength(2);
    for (const op of ops) expect(Date.parse(op.created_at)).toBe(at + 29_500);
    expect((await t.api("GET", path(p))).body.project.compute_time_seconds).toBe(30);
    const refused = await t.api("POST", path(p, `/endpoints/${p.endpointId}/start`));
    expectStatus(refused, 422);
    expect(refused.body.code).toBe("COMPUTE_TIME_QUOTA_EXCEEDED");
  });

  it("a quota set below what the period used suspends the running computes in the same request", async () => {
    const p = await project({});
    t.advance(50);
    const patched = await t.api("PATCH", path(p), {
      project: { settings: { quota: { active_time_seconds: 20 } } },
    });
    expectStatus(patched, 200);
    expect(patched.body.operations.map((o: { action: string }) => o.action)).toEqual(["suspend_compute"]);
    t.advance(2);
    expect(await endpointState(p)).toBe("idle");
  });

  it("the quota counts the current consumption period: a new month lets the computes start again", async () => {
    // The last minutes of January.
    t.clock.set(Date.parse("2025-01-31T23:55:00Z"));
    const p = await project({ quota: { active_time_seconds: 60 } });
    t.advance(120);
    expect(await endpointState(p)).toBe("idle");
    expectStatus(await t.api("POST", path(p, `/endpoints/${p.endpointId}/start`)), 422);
    t.advance(240); // 2025-02-01T00:01
    const project_ = (await t.api("GET", path(p))).body.project;
    expect(project_.consumption_period_start).toBe("2025-02-01T00:00:00Z");
    expect(project_.active_time_seconds).toBe(0);
    expectStatus(await t.api("POST", path(p, `/endpoints/${p.endpointId}/start`)), 200);
    t.advance(1);
    expect(await endpointState(p)).toBe("active");
  });

  it("quota values are checked: non-negative integers, else 400 naming the field", async () => {
    for (const [quota, field] of [
      [{ active_time_seconds: -1 }, "quota.active_time_seconds"],
      [{ compute_time_seconds: 1.5 }, "quota.compute_time_seconds"],
      [{ written_data_bytes: "10" }, "quota.written_data_bytes"],
      ["lots", "quota"],
    ] as const) {
      const res = await t.api("POST", "/api/v2/projects", { project: { settings: { quota } } });
      expectStatus(res, 400);
      expect(res.body.message, JSON.stringify(quota)).toContain(field);
    }
    const p = await project({
      quota: {
        active_time_seconds: 3600,
        compute_time_seconds: 900,
        written_data_bytes: 1e9,
        data_transfer_bytes: 1e9,
        logical_size_bytes: 1e9,
      },
    });
    expect((await t.api("GET", path(p))).body.project.settings.quota).toMatchObject({
      active_time_seconds: 3600,
    });
    expect(await endpointState(p)).toBe("active");
  });
});
