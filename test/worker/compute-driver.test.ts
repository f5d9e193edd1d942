import { afterEach, describe, expect, it } from "vitest";
import type { ComputeDriver } from "../../src/compute/driver.js";
import type { ComputeEffect } from "../../src/control-plane/operations/rules.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

/**
 * A driver whose effects take real time, as a Postgres driver's do: each perform() waits until the
 * test settles it. The worker must claim the operation, perform the effect outside any
 * transaction, and finalize only while its claim holds.
 */
class SlowDriver implements ComputeDriver {
  readonly name = "slow";
  readonly inline = false;
  readonly performed: ComputeEffect[] = [];
  private readonly waiting: { effect: ComputeEffect; resolve(): void; reject(err: Error): void }[] = [];

  perform(effect: ComputeEffect): Promise<undefined> {
    this.performed.push(effect);
    return new Promise((resolve, reject) =>
      this.waiting.push({ effect, resolve: () => resolve(undefined), reject }),
    );
  }

  /** Settles every effect under way of the given kind (only the oldest one when `oldestOnly`). */
  settle(kind: ComputeEffect["kind"], error?: string, oldestOnly = false): number {
    const all = this.waiting.filter((w) => w.effect.kind === kind);
    const matching = oldestOnly ? all.slice(0, 1) : all;
    for (const w of matching) {
      this.waiting.splice(this.waiting.indexOf(w), 1);
      if (error) w.reject(new Error(error));
      else w.resolve();
    }
    return matching.length;
  }

  async resume(): Promise<void> {}

  async discard(): Promise<void> {}

  async close(): Promise<void> {}
}

let t: TestApp;
afterEach(() => t.close());

async function createProject(t: TestApp) {
  const res = await t.api("POST", "/api/v2/projects", { project: { name: "p" } });
  expectStatus(res, 201);
  return {
    projectId: res.body.project.id as string,
    endpointId: res.body.endpoints[0].id as string,
    startOp: res.body.operations.find((o: { action: string }) => o.action === "start_compute").id as string,
  };
}

describe("a compute driver whose effects take time", () => {
  it("claims a due operation, performs its effect outside the transaction, and finalizes it when it settles", async () => {
    const driver = new SlowDriver();
    t = createTestApp({ driver });
    const { projectId, endpointId, startOp } = await createProject(t);
    t.advance(2);
    // Due and claimed, but the effect has not settled: still running, the endpoint still starting.
    expect(driver.performed.map((e) => e.kind)).toEqual(["create_timeline", "start_compute"]);
    const op = await t.api("GET", `/api/v2/projects/${projectId}/operations/${startOp}`);
    expect(op.body.operation.status).toBe("running");
    let ep = await t.api("GET", `/api/v2/projects/${projectId}/endpoints/${endpointId}`);
    expect(ep.body.endpoint).toMatchObject({ current_state: "init", pending_state: "active" });
    // Nothing becomes due twice while claimed: a further advance performs nothing again.
    t.advance(60);
    expect(driver.performed).toHaveLength(2);

    expect(driver.settle("create_timeline")).toBe(1);
    expect(driver.settle("start_compute")).toBe(1);
    await t.worker.drain();
    ep = await t.api("GET", `/api/v2/projects/${projectId}/endpoints/${endpointId}`);
    expect(ep.body.endpoint.current_state).toBe("active");
    expect(ep.body.endpoint.pending_state).toBeUndefined();
    const done = await t.api("GET", `/api/v2/projects/${projectId}/operations/${startOp}`);
    expect(done.body.operation.status).toBe("finished");
  });

  it("fails the operation with the driver's message when the effect fails", async () => {
    const driver = new SlowDriver();
    t = createTestApp({ driver });
    const { projectId, endpointId, startOp } = await createProject(t);
    t.advance(2);
    driver.settle("create_timeline");
    driver.settle("start_compute", "postgres did not start: port in use");
    await t.worker.drain();
    const op = await t.api("GET", `/api/v2/projects/${projectId}/operations/${startOp}`);
    expect(op.body.operation).toMatchObject({
      status: "failed",
      error: "postgres did not start: port in use",
      failures_count: 1,
    });
    const ep = await t.api("GET", `/api/v2/projects/${projectId}/endpoints/${endpointId}`);
    expect(ep.body.endpoint.current_state).toBe("idle");
  });

  it("records nothing for an effect whose claim no longer holds", async () => {
    const driver = new SlowDriver();
    t = createTestApp({ driver });
    const { projectId, startOp } = await createProject(t);
    t.advance(2);
    // A restart releases the claim; the operation is due again and claimed anew.
    expect(t.worker.releaseStaleClaims()).toBe(2);
    t.advance(1);
    expect(driver.performed.map((e) => e.kind)).toEqual([
      "create_timeline",
      "start_compute",
      "create_timeline",
      "start_compute",
    ]);
    // The stale attempt succeeds, but its claim is gone: the operation keeps running.
    expect(driver.settle("start_compute", undefined, true)).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    let op = await t.api("GET", `/api/v2/projects/${projectId}/operations/${startOp}`);
    expect(op.body.operation.status).toBe("running");
    // The current attempt's outcome is the one recorded.
    expect(driver.settle("start_compute", "the current attempt failed")).toBe(1);
    expect(driver.settle("create_timeline")).toBe(2);
    await t.worker.drain();
    op = await t.api("GET", `/api/v2/projects/${projectId}/operations/${startOp}`);
    expect(op.body.operation).toMatchObject({ status: "failed", error: "the current attempt failed" });

    // The project is deleted while its effects are under way: their outcome changes nothing.
    const other = await createProject(t);
    t.advance(2);
    expectStatus(await t.api("DELETE", `/api/v2/projects/${other.projectId}`), 200);
    expect(driver.settle("start_compute")).toBe(1);
    expect(driver.settle("create_timeline")).toBe(1);
    await t.worker.drain();
    expectStatus(await t.api("GET", `/api/v2/projects/${other.projectId}/operations/${other.startOp}`), 404);
  });
});
