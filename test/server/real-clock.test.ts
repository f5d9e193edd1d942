import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";

let s: RunningServer;
const key = randomKey();
beforeAll(async () => {
  s = await startServer({
    NEON_EMULATOR_DB: path.join(tempDir(), "db.sqlite"),
    NEON_EMULATOR_API_KEY: key,
    NEON_EMULATOR_OPERATION_MS: "start_compute=150,suspend_compute=100,create_timeline=100,apply_config=50",
  });
});
afterAll(() => s.stop());

function api(method: string, p: string, body?: unknown) {
  return http(s.url, key, method, `/api/v2${p}`, body);
}

async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("real clock", () => {
  it("runs a full endpoint life on wall time: active, auto-suspend to idle, wake on connect, restart", async () => {
    const created = await api("POST", "/projects", {
      project: { default_endpoint_settings: { suspend_timeout_seconds: 1 } },
    });
    expect(created.status).toBe(201);
    const pid = created.body.project.id;
    const eid = created.body.endpoints[0].id;
    const ep = async () => (await api("GET", `/projects/${pid}/endpoints/${eid}`)).body.endpoint;
    const startOp = created.body.operations.find((o: { action: string }) => o.action === "start_compute");
    // Poll the operation as clients do, until finished.
    const op = await waitFor(
      async () => (await api("GET", `/projects/${pid}/operations/${startOp.id}`)).body.operation,
      (o) => o.status === "finished",
    );
    expect(op.status).toBe("finished");
    expect((await ep()).current_state).toBe("active");
    const idle = await waitFor(ep, (e) => e.current_state === "idle");
    expect(idle.current_state).toBe("idle");
    const woke = await fetch(`${s.url}/_emulator/projects/${pid}/endpoints/${eid}/connect`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
    });
    expect(woke.status).toBe(200);
    expect((await waitFor(ep, (e) => e.current_state === "active")).current_state).toBe("active");
    const restart = await api("POST", `/projects/${pid}/endpoints/${eid}/restart`);
    expect(restart.body.operations.map((o: { action: string }) => o.action)).toEqual([
      "suspend_compute",
      "start_compute",
    ]);
    const ops = await waitFor(
      async () =>
        (await api("GET", `/projects/${pid}/operations?limit=100`)).body.operations as { status: string }[],
      (list) => list.every((o) => o.status === "finished"),
    );
    expect(ops.every((o) => o.status === "finished")).toBe(true);
    // Manual-only routes refuse in real mode.
    const adv = await fetch(`${s.url}/_emulator/clock/advance`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ seconds: 1 }),
    });
    expect(adv.status).toBe(409);
  });
});
