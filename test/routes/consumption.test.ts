import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

// The test clock starts at 2025-01-01T00:00:00Z.
let t: TestApp;
let orgId: string;
let projectId: string;
let mainId: string;
beforeEach(async () => {
  t = createTestApp();
  orgId = (await t.api("GET", "/api/v2/users/me/organizations")).body.organizations[0].id;
  const created = await t.api("POST", "/api/v2/projects", {
    project: {
      name: "metered",
      default_endpoint_settings: { autoscaling_limit_min_cu: 0.5, autoscaling_limit_max_cu: 2 },
    },
  });
  expectStatus(created, 201);
  projectId = created.body.project.id;
  mainId = created.body.branch.id;
  // Never suspended on its own: it stays active while the clock moves.
  const endpoint = `/api/v2/projects/${projectId}/endpoints/${created.body.endpoints[0].id}`;
  expectStatus(await t.api("PATCH", endpoint, { endpoint: { suspend_timeout_seconds: -1 } }), 200);
  t.advance(1); // start_compute finishes at 00:00:01: active from then
  t.advance(7200); // now 02:00:01
});
afterEach(() => t.close());

const HOURS = "from=2025-01-01T00:00:00Z&to=2025-01-01T03:00:00Z&granularity=hourly";

describe("consumption history", () => {
  it("v1 reports each hour's active and compute time from the compute's recorded activity", async () => {
    const res = await t.api("GET", `/api/v2/consumption_history/projects?${HOURS}`);
    expectStatus(res, 200);
    expect(res.body.projects).toHaveLength(1);
    const [period] = res.body.projects[0].periods;
    expect(res.body.projects[0].project_id).toBe(projectId);
    expect(period).toMatchObject({ period_plan: "scale", period_start: "2025-01-01T00:00:00Z" });
    expect(period.period_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(period.period_end).toBeUndefined(); // the current month has not ended
    expect(
      period.consumption.map(
        (f: { timeframe_start: string; active_time_seconds: number; compute_time_seconds: number }) => [
          f.timeframe_start,
          f.active_time_seconds,
          f.compute_time_seconds,
        ],
      ),
    ).toEqual([
      ["2025-01-01T00:00:00Z", 3599, 1800],
      ["2025-01-01T01:00:00Z", 3600, 1800],
      ["2025-01-01T02:00:00Z", 1, 1],
    ]);
    // The same request again, after the compute suspends, is unchanged for the past hours.
    expectStatus(
      await t.api(
        "POST",
        `/api/v2/projects/${projectId}/endpoints/${(await t.api("GET", `/api/v2/projects/${projectId}/endpoints`)).body.endpoints[0].id}/suspend`,
      ),
      200,
    );
    t.advance(3600);
    const later = await t.api("GET", `/api/v2/consumption_history/projects?${HOURS}`);
    expect(later.body.projects[0].periods[0].consumption[1].active_time_seconds).toBe(3600);
  });

  it("v2 answers the named metrics per project and per branch, paged", async () => {
    const child = await t.api("POST", `/api/v2/projects/${projectId}/branches`, {
      branch: { name: "child" },
    });
    expectStatus(child, 201);
    const q = `${HOURS}&org_id=${orgId}&metrics=compute_unit_seconds,extra_branches_month&metrics=root_branch_bytes_month`;
    const res = await t.api("GET", `/api/v2/consumption_history/v2/projects?${q}`);
    expectStatus(res, 200);
    const frames = res.body.projects[0].periods[0].consumption;
    expect(frames[1]).toEqual({
      timeframe_start: "2025-01-01T01:00:00Z",
      timeframe_end: "2025-01-01T02:00:00Z",
      metrics: [
        { metric_name: "compute_unit_seconds", value: 1800 },
        { metric_name: "extra_branches_month", value: 0 },
        { metric_name: "root_branch_bytes_month", value: expect.any(Number) },
      ],
    });

    const bq = `${HOURS}&org_id=${orgId}&project_ids=${projectId}&metrics=compute_unit_seconds&limit=1`;
    const first = await t.api("GET", `/api/v2/consumption_history/v2/branches?${bq}`);
    expectStatus(first, 200);
    expect(first.body.branches).toHaveLength(1);
    const cursor = first.body.pagination.cursor as string;
    const second = await t.api(
      "GET",
      `/api/v2/consumption_history/v2/branches?${bq}&cursor=${encodeURIComponent(cursor)}`,
    );
    expect(second.body.pagination).toBeUndefined();
    const byBranch = Object.fromEntries(
      [...first.body.branches, ...second.body.branches].map(
        (b: { branch_id: string; periods: { consumption: { metrics: { value: number }[] }[] }[] }) => [
          b.branch_id,
          b.periods[0]?.consumption[1]?.metrics[0]?.value,
        ],
      ),
    );
    expect(byBranch[mainId]).toBe(1800);
    expect(byBranch[child.body.branch.id]).toBe(0); // its compute started after 02:00
  });

  it("refuses bad windows, metrics and organizations as the public document says", async () => {
    const v2 = (q: string) => t.api("GET", `/api/v2/consumption_history/v2/projects?${q}`);
    const base = `org_id=${orgId}&metrics=compute_unit_seconds`;
    expectStatus(await v2(`${HOURS}&org_id=${orgId}&metrics=bytes_of_magic`), 400);
    const noOrg = await v2(`${HOURS}&metrics=compute_unit_seconds`);
    expectStatus(noOrg, 400);
    expect(noOrg.body.message).toBe("invalid query parameter: org_id: required");
    const noMetrics = await v2(`${HOURS}&org_id=${orgId}`);
    expectStatus(noMetrics, 400);
    expect(noMetrics.body.message).toBe("invalid query parameter: metrics: required");
    expectStatus(await v2(`${HOURS}&org_id=org-other-1&metrics=compute_unit_seconds`), 404);
    expectStatus(
      await v2(`from=2025-01-01T03:00:00Z&to=2025-01-01T01:00:00Z&granularity=hourly&${base}`),
      400,
    );
    expectStatus(
      await v2(`from=2024-12-01T00:00:00Z&to=2025-01-01T01:00:00Z&granularity=hourly&${base}`),
      406,
    );
    expectStatus(
      await v2(`from=2024-01-01T00:00:00Z&to=2024-06-01T00:00:00Z&granularity=monthly&${base}`),
      406,
    );
    expectStatus(await v2(`from=yesterday&to=2025-01-01T01:00:00Z&granularity=hourly&${base}`), 400);
    expectStatus(await v2(`${HOURS}&${base}&granularity=weekly`), 400);
    expectStatus(
      await t.api("GET", `/api/v2/consumption_history/v2/branches?${HOURS}&${base}&project_ids=no-such-1`),
      404,
    );
    // A window reaching into the future ends with the step that holds now (02:00-03:00 here).
    const future = await v2(`from=2025-01-01T00:00:00Z&to=9999-01-01T00:00:00Z&granularity=hourly&${base}`);
    expectStatus(future, 200);
    expect(
      future.body.projects[0].periods[0].consumption.map((f: { timeframe_end: string }) => f.timeframe_end),
    ).toEqual(["2025-01-01T01:00:00Z", "2025-01-01T02:00:00Z", "2025-01-01T03:00:00Z"]);
    const daily = await v2(`from=2024-12-15T00:00:00Z&to=2025-01-02T00:00:00Z&granularity=daily&${base}`);
    expectStatus(daily, 200);
    // Timeframes are cut at billing periods: December and January are two periods.
    expect(
      daily.body.projects[0].periods.map((p: { period_start: string; period_end?: string }) => [
        p.period_start,
        p.period_end,
      ]),
    ).toEqual([
      ["2024-12-01T00:00:00Z", "2025-01-01T00:00:00Z"],
      ["2025-01-01T00:00:00Z", undefined],
    ]);
  });

  it("is a paid-plan feature", async () => {
    const free = createTestApp({ plan: "free" });
    try {
      const res = await free.api("GET", `/api/v2/consumption_history/projects?${HOURS}`);
      expectStatus(res, 403);
      expect(res.body.message).toContain("paid plan");
    } finally {
      free.close();
    }
  });
});
