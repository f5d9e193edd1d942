import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeEach(() => {
  t = createTestApp();
});
afterEach(() => t.close());

describe("usage figures come from the computes' active time", () => {
  it("projects and branches count active seconds, and CU-seconds at the size each compute ran", async () => {
    const created = await t.api("POST", "/api/v2/projects", {
      project: {
        name: "usage",
        default_endpoint_settings: { autoscaling_limit_min_cu: 0.5, autoscaling_limit_max_cu: 1 },
      },
    });
    expectStatus(created, 201);
    const projectId = created.body.project.id as string;
    const branchId = created.body.branch.id as string;
    const endpointId = created.body.endpoints[0].id as string;
    expect(created.body.project).toMatchObject({
      cpu_used_sec: 0,
      compute_time_seconds: 0,
      active_time_seconds: 0,
    });

    t.advance(1); // start_compute finishes: the compute is active from here
    t.advance(100);
    const project = (await t.api("GET", `/api/v2/projects/${projectId}`)).body.project;
    expect(project).toMatchObject({ active_time_seconds: 100, compute_time_seconds: 50, cpu_used_sec: 50 });
    const branch = (await t.api("GET", `/api/v2/projects/${projectId}/branches/${branchId}`)).body.branch;
    expect(branch).toMatchObject({ active_time_seconds: 100, compute_time_seconds: 50, cpu_used_sec: 50 });
    const listed = (await t.api("GET", `/api/v2/projects/${projectId}/branches`)).body.branches[0];
    expect(listed).toMatchObject({ active_time_seconds: 100, compute_time_seconds: 50 });
    expect((await t.api("GET", "/api/v2/projects")).body.projects[0]).toMatchObject({
      active_time: 100,
      cpu_used_sec: 50,
    });

    // Suspended, it stops counting; started again at another size, the new size counts.
    expectStatus(await t.api("POST", `/api/v2/projects/${projectId}/endpoints/${endpointId}/suspend`), 200);
    t.advance(1);
    t.advance(1000);
    const idle = (await t.api("GET", `/api/v2/projects/${projectId}`)).body.project;
    expect(idle.active_time_seconds).toBeGreaterThanOrEqual(100);
    expect(idle.active_time_seconds).toBeLessThanOrEqual(102);
    expectStatus(
      await t.api("PATCH", `/api/v2/projects/${projectId}/endpoints/${endpointId}`, {
        endpoint: { autoscaling_limit_min_cu: 1, autoscaling_limit_max_cu: 1 },
      }),
      200,
    );
    expectStatus(await t.api("POST", `/api/v2/projects/${projectId}/endpoints/${endpointId}/start`), 200);
    t.advance(2);
    const before = (await t.api("GET", `/api/v2/projects/${projectId}`)).body.project;
    t.advance(10);
    const after = (await t.api("GET", `/api/v2/projects/${projectId}`)).body.project;
    expect(after.active_time_seconds - before.active_time_seconds).toBe(10);
    expect(after.compute_time_seconds - before.compute_time_seconds).toBe(10);

    // A deleted compute's time still counts.
    expectStatus(await t.api("DELETE", `/api/v2/projects/${projectId}/endpoints/${endpointId}`), 200);
    t.advance(500);
    const gone = (await t.api("GET", `/api/v2/projects/${projectId}`)).body.project;
    expect(gone.active_time_seconds).toBe(after.active_time_seconds);
  });
});
