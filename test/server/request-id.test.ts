import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";

// Over HTTP the request id is set on node's response directly (src/app.ts), not through Hono's
// headers as in the in-process tests: check that every kind of answer carries it.
let s: RunningServer;
const key = randomKey();
beforeAll(async () => {
  s = await startServer({ NEON_EMULATOR_DB: path.join(tempDir(), "db.sqlite"), NEON_EMULATOR_API_KEY: key });
});
afterAll(async () => {
  await s.stop();
});

async function requestId(p: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}${p}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
  const body = (await res.json()) as { request_id?: string };
  return { status: res.status, header: res.headers.get("x-request-id"), body };
}

describe("X-Request-ID on a real server", () => {
  it("is honoured when given and generated otherwise, on successes and errors alike", async () => {
    const ok = await requestId("/api/v2/projects", { "x-request-id": "trace-42" });
    expect(ok).toMatchObject({ status: 200, header: "trace-42" });

    const missing = await requestId("/api/v2/projects/no-such-project");
    expect(missing.status).toBe(404);
    expect(missing.header).toMatch(/^[0-9a-f-]{36}$/);
    expect(missing.body.request_id).toBe(missing.header);

    const unauthorized = await fetch(`${s.url}/api/v2/projects`, { headers: { "x-request-id": "no-key" } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("x-request-id")).toBe("no-key");
  });
});
