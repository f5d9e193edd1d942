import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PRODUCT_ROUTES } from "../../src/control-plane/products/catalog.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let branchId: string;
beforeEach(async () => {
  t = createTestApp();
  const created = await t.api("POST", "/api/v2/projects", { project: { name: "p" } });
  expectStatus(created, 201);
  projectId = created.body.project.id;
  branchId = created.body.branch.id;
});
afterEach(() => t.close());

const VALUES: Record<string, () => string> = {
  project_id: () => projectId,
  branch_id: () => branchId,
  database_name: () => "neondb",
  bucket_name: () => "assets",
  object_key: () => "a.txt",
  token_id: () => "tok-1",
  slug: () => "hello",
  auth_user_id: () => "00000000-0000-4000-8000-000000000000",
  oauth_provider_id: () => "google",
  auth_provider: () => "stack",
};
const urlOf = (path: string) =>
  `/api/v2${path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(VALUES[name]?.() ?? "x"))}`;

describe("products the emulator does not run", () => {
  it("every route answers 404 saying the product is not enabled (or, to turn it on, not available), and changes nothing", async () => {
    expect(PRODUCT_ROUTES).toHaveLength(70); // the public document's 66, and branch logs
    const before = JSON.stringify(await t.api("GET", `/api/v2/projects/${projectId}`));
    for (const route of PRODUCT_ROUTES) {
      const body =
        route.body === "none"
          ? undefined
          : route.path.startsWith("/projects/auth/")
            ? { project_id: projectId }
            : {};
      const res = await t.api(route.method.toUpperCase(), urlOf(route.path), body);
      expect(res.status, `${route.operationId}: ${res.text}`).toBe(404);
      expect(res.body.code).toMatch(/^(NOT_FOUND|STORAGE_NOT_ENABLED|AI_GATEWAY_NOT_ENABLED)$/);
      expect(res.body.message, route.operationId).toMatch(
        /not (enabled|available) for (project|branch|database) /,
      );
    }
    expect(JSON.stringify(await t.api("GET", `/api/v2/projects/${projectId}`))).toBe(before);
  });

  it("says which product and where, as Neon's clients read it", async () => {
    const auth = await t.api("GET", `/api/v2/projects/${projectId}/branches/${branchId}/auth`);
    expect(auth.body.message).toBe(`Neon Auth is not enabled for branch ${branchId}`);
    const enable = await t.api("POST", `/api/v2/projects/${projectId}/branches/${branchId}/auth`, {});
    expect(enable.body.message).toBe(
      `Neon Auth is not available for branch ${branchId}: the emulator runs Postgres computes only`,
    );
    const dataApi = await t.api("GET", `/api/v2/projects/${projectId}/branches/${branchId}/data-api/neondb`);
    expect(dataApi.body.message).toBe(`Data API is not enabled for database neondb on branch ${branchId}`);
    const storage = await t.api("GET", `/api/v2/projects/${projectId}/branches/${branchId}/storage`);
    expectStatus(storage, 404);
    expect(storage.body).toMatchObject({
      code: "STORAGE_NOT_ENABLED",
      message: `Object storage is not enabled for branch ${branchId}`,
      reason: "region_unavailable",
    });
    const gateway = await t.api("GET", `/api/v2/projects/${projectId}/branches/br-none-1/ai_gateway`);
    expectStatus(gateway, 404);
    expect(gateway.body).toMatchObject({ code: "AI_GATEWAY_NOT_ENABLED", reason: "branch_not_found" });
    const credentials = await t.api("GET", `/api/v2/projects/${projectId}/branches/${branchId}/credentials`);
    expect(credentials.body.message).toContain("platform credentials not available");
  });

  it("an unknown project, branch or database is a plain not-found; a legacy call needs its project_id", async () => {
    const noProject = await t.api("GET", "/api/v2/projects/no-such-1/branches/br-x/auth");
    expectStatus(noProject, 404);
    expect(noProject.body.message).toBe("project no-such-1 not found");
    const noBranch = await t.api("GET", `/api/v2/projects/${projectId}/branches/br-none-1/functions`);
    expect(noBranch.body.message).toBe(`branch br-none-1 not found in project ${projectId}`);
    const noDb = await t.api("GET", `/api/v2/projects/${projectId}/branches/${branchId}/data-api/nodb`);
    expect(noDb.body.message).toBe(`database nodb not found in branch ${branchId}`);
    expectStatus(await t.api("POST", "/api/v2/projects/auth/create", {}), 400);
    expectStatus(await t.api("POST", "/api/v2/projects/auth/create", "{bad"), 400);
    const other = await t.api("POST", "/api/v2/projects/auth/create", { project_id: "no-such-1" });
    expect(other.body.message).toBe("project no-such-1 not found");
    expectStatus(await t.api("GET", "/api/v2/projects/auth/create"), 404);
    // A body, where a route takes one, is a JSON object (or nothing).
    const auth = `/api/v2/projects/${projectId}/branches/${branchId}/auth`;
    expectStatus(await t.api("POST", auth, "{bad"), 400);
    expectStatus(await t.api("POST", auth, "[1, 2]"), 400);
    expectStatus(await t.api("POST", auth, ""), 404);
  });

  it("a multipart function deployment gets the same answer", async () => {
    const boundary = "----emulator";
    const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="index.js"\r\n\r\nexport default {}\r\n--${boundary}--\r\n`;
    const res = await t.request(
      "POST",
      `/api/v2/projects/${projectId}/branches/${branchId}/functions/hello/deployments`,
      multipart,
      { authorization: `Bearer ${t.key}`, "content-type": `multipart/form-data; boundary=${boundary}` },
    );
    expectStatus(res, 404);
    expect(res.body.message).toContain("Functions is not available");
  });
});
