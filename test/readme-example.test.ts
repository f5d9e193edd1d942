import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningServer, randomKey, startServer, tempDir } from "./helpers/server.js";

// The README's "Testing against the emulator" example, run as written against a real server
// started with NEON_EMULATOR_CLOCK=manual.
let server: RunningServer;
const key = randomKey();
beforeAll(async () => {
  server = await startServer({
    NEON_EMULATOR_DB: path.join(tempDir(), "db.sqlite"),
    NEON_EMULATOR_API_KEY: key,
    NEON_EMULATOR_CLOCK: "manual",
  });
  process.env.NEON_EMULATOR_URL = server.url;
  process.env.NEON_API_KEY = key;
});
afterAll(() => server.stop());

// --- README example starts here ---
const base = () => process.env.NEON_EMULATOR_URL ?? "http://127.0.0.1:4444";
async function neon(method: string, path: string, body?: unknown) {
  const res = await fetch(`${base()}${path}`, {
    method,
    headers: { authorization: `Bearer ${process.env.NEON_API_KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the example reads fields freely
  return { status: res.status, body: (await res.json()) as any };
}

it("suspends an idle endpoint after its auto-suspend delay", async () => {
  const { body: created } = await neon("POST", "/api/v2/projects", { project: { name: "suspend-test" } });
  const projectId = created.project.id;
  const endpointId = created.endpoints[0].id;

  await neon("POST", "/_emulator/clock/advance", { seconds: 5 }); // start_compute finishes
  let { body } = await neon("GET", `/api/v2/projects/${projectId}/endpoints/${endpointId}`);
  expect(body.endpoint.current_state).toBe("active");

  await neon("POST", "/_emulator/clock/advance", { seconds: 301 }); // past the 300 s default
  ({ body } = await neon("GET", `/api/v2/projects/${projectId}/endpoints/${endpointId}`));
  expect(body.endpoint.current_state).toBe("idle");

  const { body: ops } = await neon("GET", `/api/v2/projects/${projectId}/operations`);
  expect(ops.operations[0]).toMatchObject({ action: "suspend_compute", status: "finished" });
});
// --- README example ends here ---
