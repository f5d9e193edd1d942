import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { iso } from "../../src/platform/clock.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let branchId: string;
let endpointId: string;
beforeEach(async () => {
  t = createTestApp();
  const res = await t.api("POST", "/api/v2/projects", { project: {} });
  projectId = res.body.project.id;
  branchId = res.body.branch.id;
  endpointId = res.body.endpoints[0].id;
});
afterEach(() => t.close());

const ep = async () =>
  (await t.api("GET", `/api/v2/projects/${projectId}/endpoints/${endpointId}`)).body.endpoint;
const opList = async () =>
  (await t.api("GET", `/api/v2/projects/${projectId}/operations?limit=1000`)).body.operations as {
    action: string;
    status: string;
    endpoint_id?: string;
    branch_id?: string;
    error?: string;
    failures_count: number;
    total_duration_ms: number;
  }[];
const connect = () => t.api("POST", `/_emulator/projects/${projectId}/endpoints/${endpointId}/connect`);

describe("endpoint life on the manual clock", () => {
  it("nothing moves while manual time stands still", async () => {
    const before = await opList();
    expect(t.worker.runUntilIdle()).toBe(0);
    expect(await opList()).toEqual(before);
    expect((await ep()).current_state).toBe("init");
  });

  it("init -> active when start_compute finishes, setting last_active and clearing pending_state", async () => {
    t.advance(1.5);
    const e = await ep();
    // start_compute runs alongside create_timeline and takes 1000 ms.
    expect(e).toMatchObject({ current_state: "active", last_active: "2025-01-01T00:00:01Z" });
    expect(e).not.toHaveProperty("pending_state");
    const project = (await t.api("GET", `/api/v2/projects/${projectId}`)).body.project;
    expect(project.compute_last_active_at).toBe("2025-01-01T00:00:01Z");
    const ops = await opList();
    expect(ops.map((o) => `${o.action}:${o.status}`)).toEqual([
      "start_compute:finished",
      "create_timeline:finished",
    ]);
    expect(ops[0]?.total_duration_ms).toBe(1000);
    const branch = await t.api("GET", `/api/v2/projects/${projectId}/branches/${branchId}`);
    expect(branch.body.branch.current_state).toBe("ready");
  });

  it("active -> idle through suspend_compute after the auto-suspend delay, not before", async () => {
    t.advance(1); // active at 00:00:01
    t.advance(299.5);
    expect((await ep()).current_state).toBe("active");
    t.advance(0.5); // 300 s after last_active: suspend_compute starts
    const suspending = await ep();
    expect(suspending).toMatchObject({ current_state: "active", pending_state: "idle" });
    t.advance(1);
    expect((await ep()).current_state).toBe("idle");
    expect((await opList())[0]).toMatchObject({
      action: "suspend_compute",
      status: "finished",
      endpoint_id: endpointId,
    });
  });

  it("never auto-suspends with suspend_timeout_seconds -1, and honours a custom delay", async () => {
    await t.api("PATCH", `/api/v2/projects/${projectId}/endpoints/${endpointId}`, {
      endpoint: { suspend_timeout_seconds: -1 },
    });
    t.advance(7 * 86400);
    expect((await ep()).current_state).toBe("active");
    await t.api("PATCH", `/api/v2/projects/${projectId}/endpoints/${endpointId}`, {
      endpoint: { suspend_timeout_seconds: 60 },
    });
    await connect();
    t.advance(61);
    expect((await ep()).current_state).toBe("idle");
  });

  it("idle -> active via start_compute when a client connects; connect refreshes last_active when active", async () => {
    t.advance(400);
    expect((await ep()).current_state).toBe("idle");
    const woke = await connect();
    expectStatus(woke, 200);
    expect(woke.body.operations.map((o: { action: string }) => o.action)).toEqual(["start_compute"]);
    expect(woke.body.endpoint.pending_state).toBe("active");
    t.advance(1);
    expect((await ep()).current_state).toBe("active");
    t.advance(200);
    const refreshed = await connect();
    expect(refreshed.body.operations).toEqual([]);
    expect(refreshed.body.endpoint.last_active).toBe(iso(t.clock.now()));
    t.advance(200); // 200 s after the refresh: still active
    expect((await ep()).current_state).toBe("active");
  });

  it("restart is suspend then start, ending active", async () => {
    t.advance(2);
    const res = await t.api("POST", `/api/v2/projects/${projectId}/endpoints/${endpointId}/restart`);
    expect(res.body.endpoint.pending_state).toBe("active");
    t.advance(0.5);
    expect(await ep()).toMatchObject({ current_state: "idle", pending_state: "active" });
    t.advance(1);
    expect(await ep()).toMatchObject({ current_state: "active" });
  });

  it("a disabled endpoint refuses connections", async () => {
    await t.api("PATCH", `/api/v2/projects/${projectId}/endpoints/${endpointId}`, {
      endpoint: { disabled: true },
    });
    const res = await connect();
    expectStatus(res, 409);
    expect(res.body.message).toMatch(/disabled/);
  });
});

describe("check_availability", () => {
  it("runs periodically for branches with an endpoint, and never for branches without one", async () => {
    const bare = await t.api("POST", `/api/v2/projects/${projectId}/branches`, { branch: { name: "bare" } });
    t.advance(3 * 3600 + 10);
    const checks = (await opList()).filter((o) => o.action === "check_availability");
    expect(checks).toHaveLength(3);
    for (const c of checks) expect(c).toMatchObject({ branch_id: branchId, status: "finished" });
    expect(checks.some((c) => c.branch_id === bare.body.branch.id)).toBe(false);
  });
});

describe("faults on purpose", () => {
  it("makes the next N operations of an action fail, leaving the endpoint consistent", async () => {
    t.advance(400); // idle
    const armed = await t.api("POST", "/_emulator/faults", {
      action: "start_compute",
      count: 1,
      endpoint_id: endpointId,
      project_id: projectId,
      message: "no capacity",
    });
    expectStatus(armed, 201);
    expect((await t.api("GET", "/_emulator/faults")).body.faults).toHaveLength(1);
    await connect();
    t.advance(2);
    const failed = (await opList())[0];
    expect(failed).toMatchObject({
      action: "start_compute",
      status: "failed",
      error: "no capacity",
      failures_count: 1,
    });
    const e = await ep();
    expect(e.current_state).toBe("idle");
    expect(e).not.toHaveProperty("pending_state");
    // The fault is used up: the next start works.
    expect((await t.api("GET", "/_emulator/faults")).body.faults).toHaveLength(0);
    await connect();
    t.advance(2);
    expect((await ep()).current_state).toBe("active");
  });

  it("lists and clears armed faults, and validates them", async () => {
    await t.api("POST", "/_emulator/faults", { action: "suspend_compute", count: 3 });
    const cleared = await t.api("DELETE", "/_emulator/faults");
    expect(cleared.body.cleared).toBe(1);
    expectStatus(await t.api("POST", "/_emulator/faults", { action: "explode" }), 400);
    expectStatus(
      await t.api("POST", "/_emulator/faults", { action: "start_compute", project_id: "nope-nope-000000" }),
      404,
    );
    expectStatus(await t.api("POST", "/_emulator/faults", { action: "start_compute", count: 0 }), 400);
  });

  it("a failed create start leaves an init endpoint idle", async () => {
    await t.api("POST", "/_emulator/faults", { action: "start_compute" });
    const created = await t.api("POST", `/api/v2/projects/${projectId}/endpoints`, {
      endpoint: { branch_id: branchId, type: "read_only" },
    });
    t.advance(3);
    const e = (await t.api("GET", `/api/v2/projects/${projectId}/endpoints/${created.body.endpoint.id}`)).body
      .endpoint;
    // The project's own start_compute was first in line and took the fault.
    expect([e.current_state, (await ep()).current_state].sort()).toEqual(["active", "idle"]);
  });
});

describe("clock", () => {
  it("advances over HTTP and reports the new time; bad input is 400", async () => {
    const res = await t.api("POST", "/_emulator/clock/advance", { seconds: 90 });
    expectStatus(res, 200);
    expect(res.body).toEqual({ mode: "manual", now: "2025-01-01T00:01:30Z" });
    expect((await t.api("GET", "/_emulator/clock")).body.now).toBe("2025-01-01T00:01:30Z");
    for (const body of [{ seconds: -1 }, { seconds: "10" }, {}, { seconds: 1e12 }])
      expectStatus(await t.api("POST", "/_emulator/clock/advance", body), 400);
  });
});
