import { describe, expect, it } from "vitest";
import { type Exchange, publicContract, toJsonSchema } from "./contract.js";
import { DEVIATIONS } from "./contract-deviations.js";

/** The contract checker itself: it must reject what the public document rejects. */

const operation = (action: string) => ({
  id: "6a1f4a4e-0a44-4b6b-9a7e-3f0e2b1c9d11",
  project_id: "calm-sea-123456",
  action,
  status: "finished",
  failures_count: 0,
  created_at: "2025-01-01T00:00:00.000001Z",
  updated_at: "2025-01-01T00:00:01Z",
  total_duration_ms: 1000,
});

function exchange(over: Partial<Omit<Exchange, "body">> & { body: unknown }): Exchange {
  return {
    step: "unit",
    method: "GET",
    path: "/api/v2/projects/calm-sea-123456/operations",
    query: "",
    status: 200,
    contentType: "application/json",
    ...over,
    body: typeof over.body === "string" ? over.body : JSON.stringify(over.body),
  };
}

const check = (ex: Exchange) => publicContract().checkAll([ex]);

describe("contract checker", () => {
  it("maps requests to public operations, preferring literal segments", () => {
    const c = publicContract();
    expect(c.findOperation("GET", "/api/v2/projects/shared")?.operationId).toBe("listSharedProjects");
    expect(c.findOperation("GET", "/api/v2/projects/calm-sea-123456")?.operationId).toBe("getProject");
    expect(c.findOperation("POST", "/api/v2/projects/p/endpoints/ep-a/start")?.operationId).toBe(
      "startProjectEndpoint",
    );
    expect(c.findOperation("GET", "/api/v2/nothing/here")).toBeUndefined();
  });

  it("accepts a conforming body", () => {
    expect(
      check(exchange({ body: { operations: [operation("start_compute")], pagination: { cursor: "x" } } })),
    ).toEqual([]);
  });

  it("rejects a missing required field, a wrong type and an unknown enum value", () => {
    const { total_duration_ms: _, ...partial } = operation("start_compute");
    expect(check(exchange({ body: { operations: [partial] } })).join("\n")).toContain("total_duration_ms");
    expect(
      check(
        exchange({ body: { operations: [{ ...operation("start_compute"), failures_count: "0" }] } }),
      ).join("\n"),
    ).toContain("failures_count");
    expect(check(exchange({ body: { operations: [operation("reticulate_splines")] } })).join("\n")).toContain(
      "/operations/0/action must be equal to one of the allowed values",
    );
  });

  it("lets delete_tenant through only as the listed deviation", () => {
    expect(check(exchange({ body: { operations: [operation("delete_tenant")] } }))).toEqual([]);
    expect(DEVIATIONS.map((d) => d.id)).toEqual([
      "operation-action-delete-tenant",
      "endpoint-delete-empty-operations",
    ]);
    for (const d of DEVIATIONS) expect(d.spec).toMatch(/^spec\/control-plane-api\.md/);
  });

  it("rejects an undocumented success status, a non-JSON content type, an unknown route", () => {
    const created = { method: "POST", path: "/api/v2/projects", status: 200, body: {} };
    expect(check(exchange(created)).join("\n")).toContain("createProject answered 200");
    expect(check(exchange({ contentType: "text/plain", body: { operations: [] } })).join("\n")).toContain(
      "not application/json",
    );
    expect(check(exchange({ path: "/api/v2/nothing", body: {} })).join("\n")).toContain("no operation");
  });

  it("checks error bodies against the documented error shape", () => {
    const ok = { code: "NOT_FOUND", message: "project x not found", request_id: "r" };
    expect(check(exchange({ status: 404, body: ok }))).toEqual([]);
    expect(check(exchange({ status: 404, body: { error: "nope" } })).join("\n")).toContain("message");
  });

  it("turns OpenAPI nullable into JSON Schema", () => {
    expect(toJsonSchema({ type: "string", nullable: true })).toEqual({ type: ["string", "null"] });
    expect(toJsonSchema({ type: "string", enum: ["a"], nullable: true })).toEqual({
      type: ["string", "null"],
      enum: ["a", null],
    });
    expect(toJsonSchema({ allOf: [{ $ref: "#/components/schemas/X" }], nullable: true })).toEqual({
      anyOf: [{ allOf: [{ $ref: "neon-public-v2.json#/components/schemas/X" }] }, { type: "null" }],
    });
    const key = { id: 1, name: "k", created_at: "2025-01-01T00:00:00Z", last_used_from_addr: "" };
    const created_by = { id: "6a1f4a4e-0a44-4b6b-9a7e-3f0e2b1c9d11", name: "n", image: "" };
    const list = { path: "/api/v2/api_keys", body: [{ ...key, created_by, last_used_at: null }] };
    expect(check(exchange(list))).toEqual([]);
  });
});
