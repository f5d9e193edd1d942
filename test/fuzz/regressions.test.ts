import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jsonTextProblem, MAX_JSON_DEPTH } from "../../src/http/json-body.js";
import { changedTables, FuzzApp } from "./support/harness.js";

/** Regressions for what the fuzzer found, each pinned to the smallest request that showed it. */

const nest = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

let f: FuzzApp;
beforeEach(async () => {
  f = await FuzzApp.create();
});
afterEach(() => f.close());

function ids() {
  const v = f.realValues(0);
  return { pid: v.project_id, eid: v.endpoint_id, bid: v.branch_id };
}

describe("deeply nested JSON bodies (found by fuzzing: HTTP 500 from JSON.stringify overflowing its stack)", () => {
  const cases: [string, string, (i: ReturnType<typeof ids>) => string, (d: string) => string][] = [
    [
      "endpoint settings on update",
      "PATCH",
      (i) => `/api/v2/projects/${i.pid}/endpoints/${i.eid}`,
      (d) => `{"endpoint":{"settings":{"x":${d}}}}`,
    ],
    [
      "project settings on update",
      "PATCH",
      (i) => `/api/v2/projects/${i.pid}`,
      (d) => `{"project":{"settings":{"x":${d}}}}`,
    ],
    [
      "project settings on create",
      "POST",
      () => "/api/v2/projects",
      (d) => `{"project":{"settings":{"x":${d}}}}`,
    ],
    [
      "endpoint settings in a branch create",
      "POST",
      (i) => `/api/v2/projects/${i.pid}/branches`,
      (d) => `{"endpoints":[{"type":"read_only","settings":{"x":${d}}}]}`,
    ],
  ];

  it.each(cases)(
    "refuses %s 10,000 levels deep with a 400 and writes nothing",
    async (_n, method, path, body) => {
      const before = f.snapshot();
      const res = await f.send(method, path(ids()), {
        headers: { authorization: `Bearer ${f.a.key}`, "content-type": "application/json" },
        body: body(nest(10_000)),
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body).toMatchObject({ code: "INVALID_REQUEST" });
      expect(res.body.message).toContain(`${MAX_JSON_DEPTH} levels`);
      expect(changedTables(before, f.snapshot())).toEqual([]);
    },
  );

  it("still accepts settings nested within the limit", async () => {
    const { pid, eid } = ids();
    const res = await f.send("PATCH", `/api/v2/projects/${pid}/endpoints/${eid}`, {
      headers: { authorization: `Bearer ${f.a.key}`, "content-type": "application/json" },
      body: `{"endpoint":{"settings":{"x":${nest(MAX_JSON_DEPTH - 4)}}}}`,
    });
    expect(res.status, res.text).toBe(200);
  });

  it("counts only structure: brackets inside strings and escaped quotes do not nest", () => {
    const deeper = (text: string, limit: number) => jsonTextProblem(text, limit) !== undefined;
    expect(deeper(`{"a":"${"[".repeat(500)}"}`, 3)).toBe(false);
    expect(deeper(`{"a":"\\"[[[[","b":[1]}`, 2)).toBe(false);
    expect(deeper(`{"a":"\\\\","b":[[1]]}`, 3)).toBe(false);
    expect(deeper("[[[1]]]", 3)).toBe(false);
    expect(deeper("[[[[1]]]]", 3)).toBe(true);
    expect(deeper(`{"a":{"b":{"c":{}}}}`, 3)).toBe(true);
  });
});

describe("unpaired UTF-16 surrogates (found by fuzzing: stored as invalid UTF-8, read back as U+FFFD)", () => {
  it("refuses a name with an unpaired surrogate with a 400 instead of storing a different name", async () => {
    const { pid } = ids();
    const before = f.snapshot();
    for (const [method, path, body] of [
      ["POST", "/api/v2/api_keys", '{"key_name":"a\\ud800b"}'],
      ["POST", `/api/v2/projects/${pid}/branches`, '{"branch":{"name":"x\\udc00"}}'],
      ["POST", `/api/v2/projects/${pid}/branches`, '{"branch":{"name":"x\\ud800\\ud800"}}'],
      ["PATCH", `/api/v2/projects/${pid}`, '{"project":{"name":"tail\\ud83d"}}'],
      ["PATCH", `/api/v2/projects/${pid}`, '{"project":{"settings":{"\\udfff":"key"}}}'],
    ] as const) {
      const res = await f.send(method, path, {
        headers: { authorization: `Bearer ${f.a.key}`, "content-type": "application/json" },
        body,
      });
      expect(res.status, `${method} ${path} ${body}: ${res.text}`).toBe(400);
      expect(res.body.message).toMatch(/unpaired UTF-16 surrogate \\u[0-9a-f]{4}/);
    }
    expect(changedTables(before, f.snapshot())).toEqual([]);
  });

  it("two names differing only in an unpaired surrogate can no longer both be created and read back the same", async () => {
    const { pid } = ids();
    const send = (name: string) =>
      f.send("POST", `/api/v2/projects/${pid}/branches`, {
        headers: { authorization: `Bearer ${f.a.key}`, "content-type": "application/json" },
        body: `{"branch":{"name":"${name}"}}`,
      });
    expect((await send("twin\\udc00")).status).toBe(400);
    expect((await send("twin\\udc01")).status).toBe(400);
  });

  it("keeps accepting proper pairs, escaped or raw, and a literal backslash-u text", async () => {
    const { pid } = ids();
    for (const name of ["smile \\ud83d\\ude00", "raw smile 😀", "not an escape \\\\ud800"]) {
      const res = await f.send("POST", `/api/v2/projects/${pid}/branches`, {
        headers: { authorization: `Bearer ${f.a.key}`, "content-type": "application/json" },
        body: `{"branch":{"name":"${name}"}}`,
      });
      expect(res.status, `${name}: ${res.text}`).toBe(201);
      const got = await f.api("GET", `/api/v2/projects/${pid}/branches/${res.body.branch.id}`);
      expect(got.body.branch.name).toBe(JSON.parse(`"${name}"`));
    }
  });
});

describe("the fuzzer's own checks", () => {
  it("see a planted inconsistency (so a clean run means something)", () => {
    expect(f.invariants()).toEqual([]);
    const { eid } = ids();
    f.sqlite.prepare("UPDATE endpoints SET pending_state = 'idle' WHERE id = ?").run(eid);
    f.sqlite.pragma("foreign_keys = OFF");
    f.sqlite
      .prepare("UPDATE endpoints SET project_id = ? WHERE id = ?")
      .run(f.realValues(0).foreign_project_id, eid);
    f.sqlite.prepare("UPDATE branches SET is_default = 0").run();
    const broken = f.invariants().join("\n");
    expect(broken).toContain("pending_state out of step");
    expect(broken).toContain("outside their project or account");
    expect(broken).toContain("default branches");
  });

  it("see a change made by a request in the table snapshot", async () => {
    const before = f.snapshot();
    await f.api("POST", "/api/v2/api_keys", { key_name: "visible" });
    expect(changedTables(before, f.snapshot())).toContain("api_keys");
    const quiet = f.snapshot();
    await f.api("GET", "/api/v2/projects");
    expect(changedTables(quiet, f.snapshot())).toEqual([]);
  });
});
