import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NEON_RATE_LIMITS, RateLimiter } from "../../src/platform/rate-limiter.js";
import { createTestApp, expectStatus } from "../helpers/app.js";
import { type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";

/** NEON_EMULATOR_RATE_LIMIT=neon: Neon's request limits per account and per route, answered 429. */
describe("the rate limiter", () => {
  it("allows a route's 40 requests in a second, refuses the 41st for a second; other routes go on", () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(NEON_RATE_LIMITS, () => now);
    for (let i = 0; i < 40; i++) expect(limiter.take("a", "GET /projects")).toEqual({ allowed: true });
    expect(limiter.take("a", "GET /projects")).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.take("a", "GET /projects/:id")).toEqual({ allowed: true });
    expect(limiter.take("b", "GET /projects")).toEqual({ allowed: true });
    now += 1000;
    expect(limiter.take("a", "GET /projects")).toEqual({ allowed: true });
  });

  it("allows 700 requests in any minute of an account, then asks to wait until the oldest second leaves it", () => {
    let now = 5_000_000;
    const limiter = new RateLimiter(NEON_RATE_LIMITS, () => now);
    // 35 a second on two routes for 20 s (700), starting at t0.
    for (let s = 0; s < 20; s++) {
      for (let i = 0; i < 35; i++) expect(limiter.take("a", `GET /r${i % 2}`).allowed).toBe(true);
      now += 1000;
    }
    now += 10_000; // 30 s after t0
    expect(limiter.take("a", "GET /r0")).toMatchObject({ allowed: false, retryAfterSeconds: 30 });
    expect(limiter.take("other", "GET /r0")).toEqual({ allowed: true });
    now += 30_000; // t0's second has left the minute
    expect(limiter.take("a", "GET /r0")).toEqual({ allowed: true });
  });

  it("forgets idle accounts: memory stays bounded by the accounts of the last two minutes", () => {
    let now = 0;
    const limiter = new RateLimiter(NEON_RATE_LIMITS, () => now);
    for (let i = 0; i < 5000; i++) limiter.take(`account-${i}`, "GET /projects");
    now += 5 * 60_000;
    limiter.take("late", "GET /projects");
    expect((limiter as unknown as { accounts: Map<string, unknown> }).accounts.size).toBe(1);
  });
});

describe("429 on the API (in-process, a clock the test moves)", () => {
  let now = 0;
  const app = createTestApp({
    config: { rateLimits: { perMinute: 6, perRoutePerSecond: 3 } },
    rateClock: () => now,
  });
  afterAll(() => app.close());

  it("answers the public error body with Retry-After; the next second, and other routes and accounts, go on", async () => {
    for (let i = 0; i < 3; i++) expectStatus(await app.api("GET", "/api/v2/projects"), 200);
    const refused = await app.api("GET", "/api/v2/projects?limit=5");
    expectStatus(refused, 429);
    expect(refused.body).toEqual({
      code: "TOO_MANY_REQUESTS",
      message: "rate limit exceeded: more than 3 requests per second on GET /api/v2/projects",
      request_id: expect.any(String),
    });
    expect(refused.headers.get("retry-after")).toBe("1");
    // A route is its template: another project's URL is the same route, the key listing another.
    expectStatus(await app.api("GET", "/api/v2/api_keys"), 200);
    const other = await app.api("POST", "/_emulator/accounts", { name: "other" });
    expectStatus(other, 201);
    const otherKey = { authorization: `Bearer ${other.body.key.key}` };
    expectStatus(await app.request("GET", "/api/v2/projects", undefined, otherKey), 200);

    now += 1000;
    expectStatus(await app.api("GET", "/api/v2/projects"), 200);
    expectStatus(await app.api("GET", "/api/v2/projects"), 200);
    // Six in the minute (the refused one not counted): the seventh waits for the first second to leave.
    const perMinute = await app.api("GET", "/api/v2/users/me");
    expectStatus(perMinute, 429);
    expect(perMinute.body.message).toBe("rate limit exceeded: more than 6 requests per minute");
    expect(perMinute.headers.get("retry-after")).toBe("59");
    // A refused request changed nothing and the emulator's own routes are not limited.
    expectStatus(await app.api("GET", "/_emulator/clock"), 200);
    now += 59_000;
    expectStatus(await app.api("GET", "/api/v2/users/me"), 200);
  });

  it("is off by default", async () => {
    const plain = createTestApp();
    try {
      for (let i = 0; i < 60; i++) expectStatus(await plain.api("GET", "/api/v2/projects"), 200);
    } finally {
      plain.close();
    }
  });
});

describe("NEON_EMULATOR_RATE_LIMIT on a real server", () => {
  let server: RunningServer;
  const key = randomKey();
  afterAll(async () => {
    await server?.stop();
  });

  it("neon: a burst of 100 concurrent requests on one route meets 429 with Retry-After", async () => {
    server = await startServer({
      NEON_EMULATOR_DB: path.join(tempDir(), "db.sqlite"),
      NEON_EMULATOR_API_KEY: key,
      NEON_EMULATOR_COMPUTE: "none",
      NEON_EMULATOR_RATE_LIMIT: "neon",
    });
    const answers = await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(`${server.url}/api/v2/projects`, { headers: { authorization: `Bearer ${key}` } }),
      ),
    );
    const refused = answers.filter((r) => r.status === 429);
    // 100 requests span at most two seconds: one of them holds more than 40.
    expect(refused.length).toBeGreaterThan(0);
    expect(answers.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(40);
    expect(refused[0]?.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    const bodies = await Promise.all(answers.map((r) => r.json() as Promise<{ code?: string }>));
    expect(bodies.filter((b) => b.code === "TOO_MANY_REQUESTS")).toHaveLength(refused.length);
  });
});
