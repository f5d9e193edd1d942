import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRODUCT_ROUTES } from "../../src/control-plane/products/catalog.js";
import type { RealKind } from "../fuzz/support/arbitraries.js";
import {
  changedTables,
  FIXED_PARAMS,
  FuzzApp,
  type OpenApiOperation,
  operationsOf,
  type Reply,
  validBody,
} from "../fuzz/support/harness.js";

/**
 * Every route of the served OpenAPI document, swept for authentication and account isolation:
 *   - no key, a revoked key, a malformed key: 401, and nothing changes;
 *   - another account's key on this account's objects: 404 (never 403, never the object), and
 *     nothing changes;
 *   - routes without ids, called by the other account, never show this account's objects;
 *   - no spelling of a path (trailing slash, double slash, percent-encoding, dot segments)
 *     reaches a handler without a key.
 */

let f: FuzzApp;
let ops: OpenApiOperation[] = [];
let ids: Record<RealKind, string>;

beforeAll(async () => {
  f = await FuzzApp.create();
  ops = (await operationsOf(f)).ops;
  ids = f.realValues(0);
  // The VPC endpoint the sweep's URLs name (FIXED_PARAMS) exists in this account's organization.
  const vpc = `/api/v2/organizations/${f.a.orgId}/vpc/region/aws-us-east-2/vpc_endpoints/vpce-sweep`;
  expect((await f.api("POST", vpc, { label: "sweep" }, f.a.key)).status).toBe(200);
});
afterAll(() => f.close());

const PARAM_KIND: Record<string, RealKind> = {
  project_id: "project_id",
  branch_id: "branch_id",
  endpoint_id: "endpoint_id",
  role_name: "role_name",
  database_name: "database_name",
  operation_id: "operation_id",
  key_id: "key_id",
  org_id: "org_id",
  source_org_id: "source_org_id",
  member_id: "member_id",
  snapshot_id: "snapshot_id",
};

function urlOf(op: OpenApiOperation): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    encodeURIComponent(FIXED_PARAMS[name] ?? ids[PARAM_KIND[name] as RealKind] ?? "unknown"),
  );
  const query = op.path.endsWith("/connection_uri")
    ? `?role_name=${encodeURIComponent(ids.role_name)}&database_name=${encodeURIComponent(ids.database_name)}`
    : op.path.endsWith("/schema") || op.path.endsWith("/compare_schema")
      ? `?db_name=${encodeURIComponent(ids.database_name)}&base_branch_id=${encodeURIComponent(ids.branch_id)}`
      : "";
  return path + query;
}

async function call(
  op: OpenApiOperation,
  authorization: string | undefined,
  url = urlOf(op),
): Promise<Reply> {
  const body = validBody(op, ids, f.b.orgId);
  return f.send(op.method, url, {
    headers: {
      ...(authorization === undefined ? {} : { authorization }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const name = (op: OpenApiOperation) => `${op.method} ${op.path}`;
/** Public by design: health, and the front door's CA certificate (clients fetch it to verify TLS). */
const PUBLIC = ["/_emulator/health", "/_emulator/ca.pem"];
const guarded = () => ops.filter((op) => !PUBLIC.includes(op.path));

describe("authentication sweep", () => {
  it("the document lists the whole API", () => {
    expect(ops.filter((op) => op.path.startsWith("/api/v2/")).length).toBeGreaterThan(35);
  });

  it("every route but health and the CA answers 401 without a key, with a revoked key or a malformed one, and changes nothing", async () => {
    const failures: string[] = [];
    const revoked = `Bearer ${f.revoked.key}`;
    const variants: [string, string | undefined][] = [
      ["no Authorization", undefined],
      ["a revoked key", revoked],
      ["a revoked key, lowercase scheme", `bearer ${f.revoked.key}`],
      ["an unknown key", `Bearer ${"0".repeat(64)}`],
      ["the key in Basic", `Basic ${Buffer.from(`${f.a.key}:`).toString("base64")}`],
      ["a key with a suffix", `Bearer ${f.a.key}x`],
      ["a key prefix", `Bearer ${f.a.key.slice(0, 63)}`],
      ["the key in upper case", `Bearer ${f.a.key.toUpperCase()}`],
      ["two keys", `Bearer ${f.a.key} ${f.a.key}`],
      ["an empty Bearer", "Bearer "],
    ];
    for (const op of guarded())
      for (const [what, auth] of variants) {
        const before = f.snapshot();
        const res = await call(op, auth);
        const changed = changedTables(before, f.snapshot());
        if (res.status !== 401 || res.body?.code !== "UNAUTHORIZED" || typeof res.body?.message !== "string")
          failures.push(`${name(op)} with ${what}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
        if (changed.length) failures.push(`${name(op)} with ${what} changed ${changed.join(", ")}`);
      }
    expect(failures).toEqual([]);
  });

  it("another account's key gets 404 for every object of this account, and changes nothing", async () => {
    const failures: string[] = [];
    const withIds = guarded().filter((op) => op.path.includes("{"));
    expect(withIds.length).toBeGreaterThan(25);
    for (const op of withIds) {
      // The owner's view first: the same request would reach the object (or be refused for what it asks).
      const before = f.snapshot();
      const res = await call(op, `Bearer ${f.b.key}`);
      const changed = changedTables(before, f.snapshot());
      // Object storage and the AI Gateway have their own 404 bodies (reason: branch_not_found).
      const notFoundCodes = ["NOT_FOUND", "STORAGE_NOT_ENABLED", "AI_GATEWAY_NOT_ENABLED"];
      if (res.status !== 404 || !notFoundCodes.includes(res.body?.code))
        failures.push(`${name(op)} as the other account: HTTP ${res.status} ${res.text.slice(0, 200)}`);
      else if (res.body.code !== "NOT_FOUND" && res.body.reason !== "branch_not_found")
        failures.push(`${name(op)} as the other account: ${res.text.slice(0, 200)}`);
      if (changed.length) failures.push(`${name(op)} as the other account changed ${changed.join(", ")}`);
      for (const secret of [ids.project_id, ids.branch_id, ids.endpoint_id])
        if (res.status !== 404 && res.text.includes(secret)) failures.push(`${name(op)} leaked ${secret}`);
    }
    expect(failures).toEqual([]);
  });

  it("the owner reaches the same objects (the sweep's ids are real)", async () => {
    // Products the emulator does not run answer 404 "not enabled" to their owner too.
    const notRun = new Set(PRODUCT_ROUTES.map((r) => r.operationId));
    // A branch's schema is read from its real database: 422 on this compute-less server
    // (test/compute/branch-data.test.ts reads it).
    notRun.add("getProjectBranchSchema").add("getProjectBranchSchemaComparison");
    const reads = guarded().filter(
      (op) => op.method === "GET" && op.path.includes("{") && !notRun.has(op.operationId ?? ""),
    );
    for (const op of reads) {
      const res = await call(op, `Bearer ${f.a.key}`);
      expect(res.status, `${name(op)}: ${res.text.slice(0, 200)}`).toBe(200);
    }
  });

  it("routes without ids, called by another account, never show this account's objects", async () => {
    const aRows = () =>
      ["projects", "branches", "endpoints", "api_keys", "roles", "databases", "operations", "faults"].map(
        (t) =>
          JSON.stringify(
            f.sqlite.prepare(`SELECT * FROM "${t}" WHERE account_id = ? ORDER BY rowid`).all(f.a.id),
          ),
      );
    const secrets = [
      ids.project_id,
      ids.branch_id,
      ids.endpoint_id,
      ids.operation_id,
      f.a.orgId,
      f.a.id,
      "secondary",
    ];
    const failures: string[] = [];
    for (const op of guarded().filter((o) => !o.path.includes("{"))) {
      if (op.path === "/_emulator/reset") continue; // empties the caller's own account; checked below
      const before = aRows().map((s) => s.replace(/"last_used_at":\d+/g, ""));
      const res = await call(op, `Bearer ${f.b.key}`);
      if (res.status >= 500) failures.push(`${name(op)}: HTTP ${res.status}`);
      // A legacy Neon Auth call names a project in its body (ids.project_id): its 404 repeats it.
      const named =
        op.path.startsWith("/api/v2/projects/auth/") && res.status === 404 ? [ids.project_id] : [];
      for (const s of secrets)
        if (!named.includes(s) && res.text.includes(s))
          failures.push(`${name(op)} shows ${s}: ${res.text.slice(0, 200)}`);
      const after = aRows().map((s) => s.replace(/"last_used_at":\d+/g, ""));
      // The clock is the emulator's, not an account's: advancing it moves every account's operations.
      if (op.path !== "/_emulator/clock/advance" && JSON.stringify(before) !== JSON.stringify(after))
        failures.push(`${name(op)} changed this account's rows`);
    }
    const before = aRows();
    const reset = await f.send("POST", "/_emulator/reset", {
      headers: { authorization: `Bearer ${f.b.key}`, "content-type": "application/json" },
      body: JSON.stringify({ revoke_other_keys: true }),
    });
    expect(reset.status).toBe(200);
    expect(aRows()).toEqual(before);
    expect(failures).toEqual([]);
  });

  it("another account cannot aim its own requests at this account's objects through bodies and queries", async () => {
    await f.ensure();
    const own = f.realValues(0);
    const b = (await f.api("GET", "/api/v2/projects", undefined, f.b.key)).body.projects[0].id as string;
    const bBranch = (await f.api("GET", `/api/v2/projects/${b}/branches`, undefined, f.b.key)).body
      .branches[0].id as string;
    const bEndpoint = (await f.api("GET", `/api/v2/projects/${b}/endpoints`, undefined, f.b.key)).body
      .endpoints[0].id as string;
    const before = f.snapshot();
    const attempts: [string, string, unknown, number][] = [
      [
        "POST",
        `/api/v2/projects/${b}/endpoints`,
        { endpoint: { branch_id: own.branch_id, type: "read_only" } },
        404,
      ],
      [
        "PATCH",
        `/api/v2/projects/${b}/endpoints/${bEndpoint}`,
        { endpoint: { branch_id: own.branch_id } },
        404,
      ],
      ["POST", `/api/v2/projects/${b}/branches`, { branch: { parent_id: own.branch_id } }, 404],
      [
        "GET",
        `/api/v2/projects/${b}/connection_uri?branch_id=${own.branch_id}&role_name=x&database_name=y`,
        undefined,
        404,
      ],
      [
        "GET",
        `/api/v2/projects/${b}/connection_uri?endpoint_id=${own.endpoint_id}&branch_id=${bBranch}&role_name=x&database_name=y`,
        undefined,
        404,
      ],
      ["GET", `/api/v2/projects/${b}/operations/${own.operation_id}`, undefined, 404],
      ["DELETE", `/api/v2/api_keys/${f.a.keyId}`, undefined, 404],
      ["DELETE", `/api/v2/api_keys/${f.secondary.id}`, undefined, 404],
      ["POST", "/_emulator/faults", { action: "start_compute", project_id: own.project_id }, 404],
      [
        "POST",
        "/_emulator/faults",
        { action: "start_compute", project_id: b, endpoint_id: own.endpoint_id },
        404,
      ],
      ["GET", `/api/v2/projects?cursor=${own.project_id}`, undefined, 400],
      ["GET", `/api/v2/projects?org_id=${f.a.orgId}`, undefined, 200],
    ];
    for (const [method, url, body, status] of attempts) {
      const res = await f.api(method, url, body, f.b.key);
      expect(res.status, `${method} ${url}: ${res.text}`).toBe(status);
      for (const s of [own.project_id, own.branch_id, own.endpoint_id])
        if (status === 200) expect(res.text).not.toContain(s);
    }
    const changed = changedTables(before, f.snapshot());
    expect(changed.filter((t) => t !== "api_keys")).toEqual([]);
    expect(
      f.sqlite
        .prepare("SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NOT NULL")
        .get(f.a.id),
    ).toEqual({ n: 1 }); // only the fixture's own revoked key
  });

  it("a key scoped to another project of the same account gets 404 for every object of this project, 403 for the organization, and changes nothing", async () => {
    const own = await f.api("POST", "/api/v2/projects", { project: { name: "scope" } }, f.a.key);
    expect(own.status, own.text).toBe(201);
    const scoped = await f.api(
      "POST",
      `/api/v2/organizations/${f.a.orgId}/api_keys`,
      { key_name: "scoped", project_id: own.body.project.id },
      f.a.key,
    );
    expect(scoped.status, scoped.text).toBe(200);
    const failures: string[] = [];
    for (const op of guarded()) {
      const before = f.snapshot();
      const res = await call(op, `Bearer ${scoped.body.key}`);
      const changed = changedTables(before, f.snapshot()).filter((t) => t !== "api_keys");
      const expected = op.path.includes("{project_id}")
        ? [404]
        : op.path.includes("{org_id}") ||
            op.path.startsWith("/api/v2/api_keys") ||
            op.path === "/_emulator/reset"
          ? [403]
          : [200, 403];
      if (!expected.includes(res.status))
        failures.push(`${name(op)}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
      if (changed.length) failures.push(`${name(op)} changed ${changed.join(", ")}`);
      for (const secret of [ids.project_id, ids.branch_id, ids.endpoint_id])
        if (res.status !== 404 && res.text.includes(secret)) failures.push(`${name(op)} shows ${secret}`);
    }
    expect(failures).toEqual([]);
  });

  it("no spelling of a path reaches a handler without a key", async () => {
    const failures: string[] = [];
    for (const op of guarded()) {
      const url = urlOf(op);
      const [path, query = ""] = url.split("?");
      const q = query ? `?${query}` : "";
      const p = path as string;
      const variants = [
        `${p}/${q}`,
        `/${p}${q}`,
        `${p.replace("/api/v2/", "/api/v2//").replace("/_emulator/", "/_emulator//")}${q}`,
        `${p.replace(/\/([a-z])/, (_m, ch: string) => `/%${ch.charCodeAt(0).toString(16)}`)}${q}`,
        `${p.replace(/([a-z])([a-z_]*)$/, (_m, ch: string, rest: string) => `%${ch.charCodeAt(0).toString(16)}${rest}`)}${q}`,
        `${p.replace("/api/v2/", "/API/V2/")}${q}`,
        `${p.replace("/api/v2/", "/api/v2/./").replace("/_emulator/", "/_emulator/./")}${q}`,
        `${p.replace("/api/v2/", "/api/v2/x/../").replace("/_emulator/", "/_emulator/health/../")}${q}`,
        `${p.replace("/_emulator/", "/_emulator/health%2F..%2F")}${q}`,
        `${p};x=1${q}`,
        `${p}%00${q}`,
        `${p}${q}#fragment`,
      ];
      for (const v of variants) {
        const res = await call(op, undefined, v);
        if (res.status < 400 || res.status >= 500)
          failures.push(`${op.method} ${v}: HTTP ${res.status} ${res.text.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
