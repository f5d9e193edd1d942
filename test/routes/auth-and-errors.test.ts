import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
beforeEach(() => {
  t = createTestApp();
});
afterEach(() => t.close());

describe("authentication", () => {
  const cases: [string, Record<string, string>][] = [
    ["no Authorization header", {}],
    ["a non-Bearer scheme", { authorization: "Basic dXNlcjpwYXNz" }],
    ["an empty Bearer token", { authorization: "Bearer " }],
    ["an unknown key", { authorization: `Bearer ${"a".repeat(64)}` }],
    ["the key only in a cookie", { cookie: "keycloak_token=abc" }],
  ];
  it.each(cases)("answers 401 with a JSON error for %s", async (_name, headers) => {
    const res = await t.request("GET", "/api/v2/projects", undefined, headers);
    expectStatus(res, 401);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.body).toMatchObject({ code: "UNAUTHORIZED" });
    expect(res.body.message.length).toBeGreaterThan(5);
    expect(res.body.request_id).toBeTruthy();
  });

  it("answers 401 for a revoked key on the next request", async () => {
    const created = await t.api("POST", "/api/v2/api_keys", { key_name: "r" });
    await t.api("DELETE", `/api/v2/api_keys/${created.body.id}`);
    const res = await t.request("GET", "/api/v2/projects", undefined, {
      authorization: `Bearer ${created.body.key}`,
    });
    expectStatus(res, 401);
    expect(res.body.message).toMatch(/revoked/);
  });

  it("guards emulator routes except health", async () => {
    expectStatus(await t.request("GET", "/_emulator/health"), 200);
    expectStatus(await t.request("GET", "/_emulator/faults"), 401);
    expectStatus(await t.request("POST", "/_emulator/clock/advance", { seconds: 1 }), 401);
  });

  it("accepts the scheme case-insensitively", async () => {
    expectStatus(
      await t.request("GET", "/api/v2/projects", undefined, { authorization: `bearer ${t.key}` }),
      200,
    );
  });
});

describe("errors", () => {
  it("honours a client X-Request-ID and generates one otherwise", async () => {
    const given = await t.request("GET", "/api/v2/projects", undefined, { "x-request-id": "req-123" });
    expect(given.headers.get("x-request-id")).toBe("req-123");
    expect(given.body.request_id).toBe("req-123");
    const generated = await t.request("GET", "/api/v2/projects");
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers unknown routes with a JSON 404, not HTML", async () => {
    const res = await t.api("GET", "/api/v2/nothing-here");
    expectStatus(res, 404);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.body.code).toBe("NOT_FOUND");
    expectStatus(await t.request("GET", "/elsewhere"), 404);
  });

  it("answers a wrong method with 405 and an Allow header", async () => {
    const res = await t.api("PUT", "/api/v2/api_keys");
    expectStatus(res, 405);
    expect(res.headers.get("allow")).toContain("GET");
    expect(res.body.code).toBe("METHOD_NOT_ALLOWED");
  });

  it("answers an oversized body with 413 and writes nothing", async () => {
    const res = await t.api("POST", "/api/v2/api_keys", { key_name: "x", pad: "y".repeat(70 * 1024) });
    expectStatus(res, 413);
    expect(res.body.code).toBe("PAYLOAD_TOO_LARGE");
    const list = await t.api("GET", "/api/v2/api_keys");
    expect(list.body).toHaveLength(1);
  });

  it("answers a non-JSON content type on a JSON route with 415", async () => {
    const res = await t.request("POST", "/api/v2/api_keys", "key_name=x", {
      authorization: `Bearer ${t.key}`,
      "content-type": "text/plain",
    });
    expectStatus(res, 415);
    expect(res.body.message).toMatch(/JSON/);
  });

  it("answers JSON that is not an object with a 400", async () => {
    for (const body of ["[]", '"text"', "null", "42"]) {
      const res = await t.api("POST", "/api/v2/api_keys", body);
      expectStatus(res, 400);
    }
  });

  it("serves the OpenAPI document generated from the route schemas", async () => {
    const res = await t.request("GET", "/openapi.json");
    expectStatus(res, 200);
    expect(res.body.openapi).toBe("3.1.0");
    const ops = Object.values(
      res.body.paths as Record<string, Record<string, { operationId?: string }>>,
    ).flatMap((p) => Object.values(p).map((o) => o.operationId));
    for (const id of ["createApiKey", "listProjects", "createProjectEndpoint", "listProjectOperations"])
      expect(ops).toContain(id);
    // As the public document: the base in `servers`, paths without it; the emulator's routes apart.
    expect(res.body.servers).toEqual([{ url: "/api/v2" }]);
    expect(Object.keys(res.body.paths)).toContain("/projects/{project_id}/endpoints");
    expect(
      Object.keys(res.body.paths).filter((p) => p.startsWith("/api/v2") || p.startsWith("/_emulator")),
    ).toEqual([]);
    const own = await t.request("GET", "/_emulator/openapi.json");
    expectStatus(own, 200);
    expect(own.body.servers).toEqual([{ url: "/_emulator" }]);
    expect(Object.keys(own.body.paths)).toEqual(expect.arrayContaining(["/health", "/clock/advance"]));
  });

  it("serves the API reference page with its script from the emulator itself (no CDN)", async () => {
    const page = await t.request("GET", "/docs");
    expectStatus(page, 200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain('<script src="/docs/scalar.js">');
    expect(page.text).toContain("/openapi.json");
    const script = await t.request("GET", "/docs/scalar.js");
    expectStatus(script, 200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect(script.text.length).toBeGreaterThan(100_000);
    const etag = script.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await t.request("GET", "/docs/scalar.js", undefined, { "if-none-match": etag });
    expectStatus(again, 304);
    expect(again.text).toBe("");
  });
});
