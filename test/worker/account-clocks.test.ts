import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLOCK_START, createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

/**
 * A clock per account (manual mode): an advance moves the caller's account alone, and everything
 * due in that account happens at its time. Regression (attack review): the clock was shared, so
 * one suite's advance finished, suspended and checked another suite's objects.
 */
let t: TestApp;
let b: Record<string, string>;
beforeEach(async () => {
  t = createTestApp();
  const other = await t.api("POST", "/_emulator/accounts", { name: "Suite B" });
  expectStatus(other, 201);
  b = { authorization: `Bearer ${other.body.key.key}` };
});
afterEach(() => t.close());

const asB = (method: string, path: string, body?: unknown) => t.request(method, path, body, b);
const advance = (seconds: number, headers?: Record<string, string>) =>
  headers
    ? t.request("POST", "/_emulator/clock/advance", { seconds }, headers)
    : t.api("POST", "/_emulator/clock/advance", { seconds });
const endpointState = async (get: typeof asB, projectId: string) =>
  (await get("GET", `/api/v2/projects/${projectId}/endpoints`)).body.endpoints[0].current_state;

describe("a clock per account", () => {
  it("an advance moves the caller's account only; the other's operations wait for its own time", async () => {
    const mine = await t.api("POST", "/api/v2/projects", { project: {} });
    const theirs = await asB("POST", "/api/v2/projects", { project: {} });
    expectStatus(theirs, 201);

    const moved = await advance(10);
    expectStatus(moved, 200);
    expect(moved.body.now).toBe(new Date(CLOCK_START + 10_000).toISOString().replace(".000Z", "Z"));
    expect((await t.api("GET", "/_emulator/clock")).body.now).toBe(moved.body.now);
    expect((await asB("GET", "/_emulator/clock")).body.now).toBe(
      new Date(CLOCK_START).toISOString().replace(".000Z", "Z"),
    );
    // Mine is done; theirs has not moved.
    expect(await endpointState(t.api, mine.body.project.id)).toBe("active");
    expect(await endpointState(asB, theirs.body.project.id)).toBe("init");
    const ops = (await asB("GET", `/api/v2/projects/${theirs.body.project.id}/operations`)).body.operations;
    expect(ops.every((o: { status: string }) => o.status === "running")).toBe(true);

    // What B makes now is stamped with B's time, not A's.
    const branch = await asB("POST", `/api/v2/projects/${theirs.body.project.id}/branches`, {
      branch: { name: "dev" },
    });
    expectStatus(branch, 201);
    expect(Date.parse(branch.body.branch.created_at)).toBe(CLOCK_START);

    // B's own advance finishes B's operations at B's time.
    expectStatus(await advance(10, b), 200);
    expect(await endpointState(asB, theirs.body.project.id)).toBe("active");
  });

  it("two accounts advancing at once each see only their own transitions", async () => {
    const mine = await t.api("POST", "/api/v2/projects", { project: {} });
    const theirs = await asB("POST", "/api/v2/projects", { project: {} });
    // A goes past the 300 s auto-suspend delay, B does not: A's compute suspends, B's stays up.
    const [a, bb] = await Promise.all([advance(400), advance(5, b)]);
    expectStatus(a, 200);
    expectStatus(bb, 200);
    expect(await endpointState(t.api, mine.body.project.id)).toBe("idle");
    expect(await endpointState(asB, theirs.body.project.id)).toBe("active");
    const theirOps = (await asB("GET", `/api/v2/projects/${theirs.body.project.id}/operations`)).body
      .operations as { action: string; created_at: string; updated_at: string }[];
    expect(theirOps.map((o) => o.action)).not.toContain("suspend_compute");
    for (const op of theirOps) expect(Date.parse(op.updated_at)).toBeLessThanOrEqual(CLOCK_START + 5000);
  });

  it("the availability checks of one account run at its own hours", async () => {
    const mine = await t.api("POST", "/api/v2/projects", { project: {} });
    const theirs = await asB("POST", "/api/v2/projects", { project: {} });
    expectStatus(await advance(3 * 3600), 200);
    const checks = async (get: typeof asB, projectId: string) =>
      (await get("GET", `/api/v2/projects/${projectId}/operations?limit=100`)).body.operations.filter(
        (o: { action: string }) => o.action === "check_availability",
      ).length;
    expect(await checks(t.api, mine.body.project.id)).toBe(3);
    expect(await checks(asB, theirs.body.project.id)).toBe(0);
  });
});
