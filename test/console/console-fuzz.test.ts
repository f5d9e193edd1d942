import type Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { signInLink } from "../../src/console/sessions.js";
import { connectionOf } from "../../src/platform/statements.js";
import { nastyString } from "../fuzz/support/arbitraries.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

/**
 * Every console route with hostile path segments, query values and form fields, signed in with a
 * valid CSRF token (so the handlers are reached): never a 5xx, and a refused post (4xx) leaves
 * every table as it was. SOAK=1 runs ten times as many cases.
 */
const RUNS = process.env.SOAK ? 3000 : 300;

let t: TestApp;
let cookie = "";
let csrf = "";
let real: { project: string; branch: string; endpoint: string; key: string };

beforeAll(async () => {
  t = createTestApp();
  const created = await t.api("POST", "/api/v2/projects", { project: { name: "fuzzed" } });
  t.advance(5);
  const keys = await t.api("GET", "/api/v2/api_keys");
  real = {
    project: created.body.project.id,
    branch: created.body.branch.id,
    endpoint: created.body.endpoints[0].id,
    key: String(keys.body[0].id),
  };
  const { url } = signInLink(t.ctx.db, t.accountId, "http://localhost", Date.now());
  const signedIn = await t.request("GET", url.slice("http://localhost".length));
  cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] as string;
  const page = await t.request("GET", "/app/projects", undefined, { cookie });
  csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
});
afterAll(() => t.close());

const ROUTES: [method: "GET" | "POST", path: string][] = [
  ["GET", "/app/projects/:p"],
  ["GET", "/app/projects/:p/operations"],
  ["GET", "/app/projects/:p/branches/:b"],
  ["GET", "/app/projects/:p/sql"],
  ["GET", "/app/projects/:p/monitoring"],
  ["GET", "/app/assets/:x"],
  ["POST", "/app/projects"],
  ["POST", "/app/projects/:p/branches"],
  ["POST", "/app/projects/:p/branches/:b/rename"],
  ["POST", "/app/projects/:p/branches/:b/protect"],
  ["POST", "/app/projects/:p/branches/:b/set-default"],
  ["POST", "/app/projects/:p/branches/:b/reset"],
  ["POST", "/app/projects/:p/branches/:b/delete"],
  ["POST", "/app/projects/:p/branches/:b/computes"],
  ["POST", "/app/projects/:p/branches/:b/computes/:e/edit"],
  ["POST", "/app/projects/:p/branches/:b/computes/:e/start"],
  ["POST", "/app/projects/:p/branches/:b/computes/:e/delete"],
  ["POST", "/app/projects/:p/branches/:b/roles"],
  ["POST", "/app/projects/:p/branches/:b/roles/delete"],
  ["POST", "/app/projects/:p/branches/:b/roles/reveal"],
  ["POST", "/app/projects/:p/branches/:b/roles/reset"],
  ["POST", "/app/projects/:p/branches/:b/databases"],
  ["POST", "/app/projects/:p/branches/:b/databases/delete"],
  ["POST", "/app/projects/:p/sql"],
  ["POST", "/app/settings/api-keys"],
  ["POST", "/app/settings/api-keys/:k/revoke"],
  ["POST", "/app/emulator/clock/advance"],
  ["POST", "/app/emulator/faults"],
];

const FIELDS = [
  "name",
  "key_name",
  "region_id",
  "pg_version",
  "min_cu",
  "max_cu",
  "suspend_timeout_seconds",
  "parent_id",
  "with_compute",
  "protected",
  "type",
  "owner_name",
  "database_name",
  "role_name",
  "query",
  "seconds",
  "action",
  "count",
  "confirm",
];

const segment = (real: string) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(real) },
    { weight: 2, arbitrary: nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ""))) },
    { weight: 1, arbitrary: fc.constantFrom("%", "%zz", "%00", "..", "%2F", "%ED%A0%80") },
  );

const value = fc.oneof(
  nastyString.map((s) => s.replace(/[\ud800-\udfff]/g, "")),
  fc.constantFrom("yes", "true", "0.25", "8", "-1", "read_only", "read_write", "start_compute", "neondb"),
);

function snapshot(): string {
  const db = connectionOf(t.ctx.db) as Database.Database;
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_\\_%' ESCAPE '\\'")
    .all() as { name: string }[];
  return tables
    .filter((x) => !["console_sessions", "console_sign_in_tokens", "api_keys"].includes(x.name))
    .map((x) => `${x.name}:${JSON.stringify(db.prepare(`SELECT * FROM "${x.name}" ORDER BY rowid`).all())}`)
    .join("\n");
}

/** Statuses seen: the run must reach the handlers (successes and refusals), not stop at the guards. */
const seen = new Map<number, number>();

it(`${RUNS} hostile requests to the console's routes: never a 5xx, a refused post changes nothing`, async () => {
  const caseArb = fc.record({
    route: fc.constantFrom(...ROUTES),
    p: segment(real.project),
    b: segment(real.branch),
    e: segment(real.endpoint),
    k: segment(real.key),
    x: segment("console.css"),
    query: fc.dictionary(
      fc.constantFrom("tab", "window", "branch_id", "endpoint_id", "ops", "notice", "error"),
      value,
      {
        maxKeys: 3,
      },
    ),
    form: fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 6 }),
  });
  await fc.assert(
    fc.asyncProperty(caseArb, async (c) => {
      const [method, pattern] = c.route;
      const path = pattern
        .replace(":p", c.p)
        .replace(":b", c.b)
        .replace(":e", c.e)
        .replace(":k", c.k)
        .replace(":x", c.x);
      const url = `${path}?${new URLSearchParams(c.query).toString()}`;
      const before = method === "POST" ? snapshot() : "";
      const res =
        method === "GET"
          ? await t.request("GET", url, undefined, { cookie })
          : await t.request("POST", url, new URLSearchParams({ ...c.form, _csrf: csrf }).toString(), {
              cookie,
              "content-type": "application/x-www-form-urlencoded",
            });
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      expect(
        res.status,
        `${method} ${url} ${JSON.stringify(c.form)}: ${res.text.slice(0, 400)}`,
      ).toBeLessThan(500);
      if (method === "POST" && res.status >= 400)
        expect(snapshot() === before, `${method} ${url} changed tables and answered ${res.status}`).toBe(
          true,
        );
      // Keep the fixtures alive for later cases.
      t.advance(5);
    }),
    { numRuns: RUNS },
  );
  const share = (statuses: number[]) => statuses.reduce((n, s) => n + (seen.get(s) ?? 0), 0) / RUNS;
  // Pages rendered and actions done (200, 303), and refusals by the services (400, 404, 409, 423).
  expect(share([200, 303]), JSON.stringify([...seen])).toBeGreaterThan(0.3);
  expect(share([400, 404, 409, 422, 423]), JSON.stringify([...seen])).toBeGreaterThan(0.1);
  expect(seen.get(403) ?? 0, "the CSRF token is sent: no case should stop at the guard").toBe(0);
}, 300_000);
