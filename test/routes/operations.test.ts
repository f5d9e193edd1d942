import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { operations } from "../../src/control-plane/operations/table.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let endpointId: string;
beforeEach(async () => {
  t = createTestApp();
  const res = await t.api("POST", "/api/v2/projects", { project: {} });
  projectId = res.body.project.id;
  endpointId = res.body.endpoints[0].id;
});
afterEach(() => t.close());

const ops = () => `/api/v2/projects/${projectId}/operations`;

describe("GET /projects/{p}/operations", () => {
  it("lists newest first with the public fields", async () => {
    const res = await t.api("GET", ops());
    expectStatus(res, 200);
    expect(res.body.operations.map((o: { action: string }) => o.action)).toEqual([
      "start_compute",
      "create_timeline",
    ]);
    const [start, timeline] = res.body.operations;
    expect(start).toMatchObject({
      project_id: projectId,
      endpoint_id: endpointId,
      status: "running",
      failures_count: 0,
      total_duration_ms: 0,
    });
    expect(timeline).not.toHaveProperty("endpoint_id");
    expect(timeline.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(start.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(res.body.pagination.cursor).toBe(timeline.created_at);
  });

  it("walks a burst created in the same millisecond with limit=1, every operation exactly once", async () => {
    // All of these happen at one manual-clock instant.
    for (let i = 0; i < 10; i++)
      await t.api("POST", `/api/v2/projects/${projectId}/endpoints/${endpointId}/restart`);
    const all = (await t.api("GET", `${ops()}?limit=1000`)).body.operations.map((o: { id: string }) => o.id);
    expect(all).toHaveLength(22);
    const walked: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 30; i++) {
      const res = await t.api(
        "GET",
        `${ops()}?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expectStatus(res, 200);
      if (res.body.operations.length === 0) break;
      walked.push(res.body.operations[0].id);
      cursor = res.body.pagination.cursor;
    }
    expect(walked).toEqual(all);
  });

  it("renders every listed operation exactly as the single read does (nulls, escapes, timestamps)", async () => {
    const base = { accountId: t.accountId, projectId, action: "apply_config" as const, failuresCount: 0 };
    // Odd but valid rows: no branch or endpoint, an error needing JSON escapes, whole-second,
    // sub-second and leading-zero timestamps, a date before 2000.
    const rows = [
      {
        branchId: null,
        endpointId: null,
        error: null,
        createdUs: 946_684_799_000_007,
        updatedAt: 946_684_799_000,
      },
      {
        branchId: "br-x",
        endpointId: null,
        error: 'quote " slash \\ newline \n tab \t ü 🐘',
        createdUs: 1_735_603_200_000_000,
        updatedAt: 1_735_603_200_001,
      },
      {
        branchId: "br-x",
        endpointId: endpointId,
        error: "",
        createdUs: 1_735_603_200_099_999,
        updatedAt: 1_735_603_200_999,
      },
      {
        branchId: "",
        endpointId: "",
        error: null,
        createdUs: 1_735_603_200_100_000,
        updatedAt: 1_735_603_260_000,
      },
    ];
    t.ctx.db
      .insert(operations)
      .values(
        rows.map((r, i) => ({
          ...base,
          ...r,
          id: `00000000-0000-4000-8000-00000000000${i}`,
          status: "failed" as const,
          totalDurationMs: i * 1001,
        })),
      )
      .run();
    const page = await t.api("GET", `${ops()}?limit=1000`);
    expectStatus(page, 200);
    expect(page.body.operations).toHaveLength(6);
    for (const op of page.body.operations) {
      const one = await t.api("GET", `${ops()}/${op.id}`);
      expectStatus(one, 200);
      expect(op).toStrictEqual(one.body.operation);
    }
    const oldest = page.body.operations.at(-1);
    expect(oldest).toStrictEqual({
      id: "00000000-0000-4000-8000-000000000000",
      project_id: projectId,
      action: "apply_config",
      status: "failed",
      failures_count: 0,
      created_at: "1999-12-31T23:59:59.000007Z",
      // Never before created_at.
      updated_at: "1999-12-31T23:59:59.000007Z",
      total_duration_ms: 0,
    });
    expect(page.body.pagination).toEqual({ cursor: "1999-12-31T23:59:59.000007Z" });
    // Past the end: no operations, and the cursor sent comes back.
    const end = await t.api("GET", `${ops()}?cursor=${encodeURIComponent(oldest.created_at)}`);
    expectStatus(end, 200);
    expect(end.body).toStrictEqual({ operations: [], pagination: { cursor: oldest.created_at } });
  });

  it.each(["limit=0", "limit=1001", "limit=x", "cursor=yesterday"])("rejects %s with 400", async (q) => {
    const res = await t.api("GET", `${ops()}?${q}`);
    expectStatus(res, 400);
  });

  it("404s an unknown or foreign project", async () => {
    expectStatus(await t.api("GET", "/api/v2/projects/nope-nope-000000/operations"), 404);
  });
});

describe("GET /projects/{p}/operations/{id}", () => {
  it("returns one operation; malformed ids are 400, unknown ones 404", async () => {
    const [op] = (await t.api("GET", ops())).body.operations;
    const res = await t.api("GET", `${ops()}/${op.id}`);
    expectStatus(res, 200);
    expect(res.body.operation).toEqual(op);
    const bad = await t.api("GET", `${ops()}/not-a-uuid`);
    expectStatus(bad, 400);
    expect(bad.body.message).toContain("operation_id");
    expectStatus(await t.api("GET", `${ops()}/00000000-0000-4000-8000-000000000000`), 404);
  });
});

describe("ordering on one endpoint", () => {
  it("a new operation waits (scheduling) until earlier ones on the endpoint finish", async () => {
    // start_compute (1000 ms) runs from creation; the suspend waits for it.
    const suspend = await t.api("POST", `/api/v2/projects/${projectId}/endpoints/${endpointId}/suspend`);
    expect(suspend.body.operations[0].status).toBe("scheduling");
    t.advance(0.5);
    const status = async () =>
      Object.fromEntries(
        (await t.api("GET", ops())).body.operations.map((o: { action: string; status: string }) => [
          o.action,
          o.status,
        ]),
      );
    expect(await status()).toEqual({
      create_timeline: "finished",
      start_compute: "running",
      suspend_compute: "scheduling",
    });
    t.advance(0.5);
    expect(await status()).toEqual({
      create_timeline: "finished",
      start_compute: "finished",
      suspend_compute: "running",
    });
    t.advance(0.5);
    expect(await status()).toEqual({
      create_timeline: "finished",
      start_compute: "finished",
      suspend_compute: "finished",
    });
    expect(
      (await t.api("GET", `/api/v2/projects/${projectId}/endpoints/${endpointId}`)).body.endpoint
        .current_state,
    ).toBe("idle");
  });
});

describe("operation timestamps while the clock stands still", () => {
  it("never run ahead of the clock's millisecond, and updated_at is never before created_at", async () => {
    // Regression (attack review): 6,304 operations made while a manual clock stood still ended up
    // to 6 ms ahead of it, 5,304 of them with created_at after updated_at.
    const still = createTestApp({ config: { limits: { projects: 2000 } } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 1200; i++) {
        const p = await still.api("POST", "/api/v2/projects", { project: {} });
        expectStatus(p, 201);
        ids.push(p.body.project.id);
      }
      const clockUs = still.clock.now() * 1000;
      const sqlite = (still.ctx.db as unknown as { $client: import("better-sqlite3").Database }).$client;
      const { n, latest } = sqlite
        .prepare("SELECT count(*) AS n, max(created_us) AS latest FROM operations")
        .get() as {
        n: number;
        latest: number;
      };
      expect(n).toBeGreaterThanOrEqual(2400);
      expect(latest).toBeLessThan(clockUs + 1000);
      for (const id of ids.slice(0, 50)) {
        const page = await still.api("GET", `/api/v2/projects/${id}/operations`);
        for (const op of page.body.operations as { created_at: string; updated_at: string }[])
          expect(op.updated_at >= op.created_at, `${op.created_at} > ${op.updated_at}`).toBe(true);
      }
    } finally {
      still.close();
    }
  }, 60_000);
});
