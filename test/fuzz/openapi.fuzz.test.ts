import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRODUCT_ROUTES } from "../../src/control-plane/products/catalog.js";
import {
  DEEP_PLACEHOLDER,
  fromSchema,
  hostileValue,
  type JsonSchema,
  nastyString,
  REAL_PATTERN,
  type RealKind,
  real,
  realKindOf,
  type SchemaDoc,
} from "./support/arbitraries.js";
import {
  changedTables,
  FuzzApp,
  MAX_BODY_BYTES,
  type OpenApiOperation,
  operationsOf,
  type Reply,
} from "./support/harness.js";

/**
 * Property-based fuzzing of every operation in the served OpenAPI document: bodies, query
 * strings, path ids and headers, valid-ish and hostile. For every request:
 *   - never a 5xx;
 *   - every error is a JSON body with a `message` and a `code`;
 *   - a rejected request (4xx) leaves every table exactly as it was;
 *   - no response ever echoes a key secret other than the one a create returns.
 * SOAK=1 runs 10,000 cases in all; the normal run a few hundred.
 */

const SOAK = Boolean(process.env.SOAK);
const TOTAL_CASES = SOAK ? 10_000 : 600;
/** Of those, the share sent to one shared app in random order across operations (interactions). */
const MIXED_CASES = TOTAL_CASES / 5;
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

type AuthChoice = "main" | "secondary" | "revoked" | "foreign" | "none" | { raw: string };

interface Case {
  method: string;
  path: string;
  query: string;
  auth: AuthChoice;
  headers: Record<string, string>;
  body?: string;
  pick: number;
  /** Sent as the harness's valid request for the operation instead (path, query and body). */
  valid: boolean;
}

const FOREIGN: Partial<Record<RealKind, RealKind>> = {
  project_id: "foreign_project_id",
  branch_id: "foreign_branch_id",
  endpoint_id: "foreign_endpoint_id",
  key_id: "foreign_key_id",
};

/** encodeURIComponent, except that a lone surrogate (which it refuses) goes as its raw UTF-8 bytes. */
function encodeSegment(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s.replace(/[\ud800-\udfff]/g, "%ED%A0%80").replace(/[^%\w.-]/g, (ch) => {
      try {
        return encodeURIComponent(ch);
      } catch {
        return "%EF%BF%BD";
      }
    });
  }
}

const RAW_SEGMENTS = [
  "%",
  "%00",
  "%zz",
  "..",
  ".",
  "%2e%2e",
  "a%2Fb",
  "%252F",
  "%F0%9F%98%80",
  "%ED%A0%80",
  "%C0%AF",
  "",
  "%20",
];

function pathParam(name: string): fc.Arbitrary<string> {
  const kind = realKindOf(name);
  const foreign = kind ? FOREIGN[kind] : undefined;
  // Mostly real ids, so requests with several path parameters still reach the handlers.
  const options: fc.WeightedArbitrary<string>[] = [
    { weight: 2, arbitrary: nastyString.map(encodeSegment) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  ];
  if (kind) options.push({ weight: 20, arbitrary: fc.constant(real(kind)) });
  if (foreign) options.push({ weight: 3, arbitrary: fc.constant(real(foreign)) });
  if (name === "key_id")
    options.push({
      weight: 2,
      arbitrary: fc.oneof(fc.integer(), fc.double()).map((n) => encodeSegment(String(n))),
    });
  return fc.oneof(...options);
}

function queryString(doc: SchemaDoc, op: OpenApiOperation): fc.Arbitrary<string> {
  const declared = op.parameters.filter((p) => p.in === "query");
  const value = (p: OpenApiOperation["parameters"][number]) =>
    fc.oneof(
      {
        weight: 4,
        arbitrary: fromSchema(doc, p.schema as JsonSchema, { hostile: 0, field: p.name }).map((v) =>
          typeof v === "string" ? v : JSON.stringify(v),
        ),
      },
      { weight: 2, arbitrary: nastyString },
    );
  // A declared parameter is sent now and then (nearly always when required).
  const params = fc.record(
    Object.fromEntries(
      declared.map((p) => [
        p.name,
        fc.oneof(
          { weight: p.required ? 1 : 7, arbitrary: fc.constant(undefined) },
          { weight: p.required ? 12 : 3, arbitrary: value(p) },
        ),
      ]),
    ),
  );
  const extra = fc.dictionary(fc.constantFrom("limit", "cursor", "x", "__proto__", "a[]", ""), nastyString, {
    maxKeys: 2,
  });
  const structured = fc.tuple(params, extra, fc.boolean()).map(([p, e, repeat]) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...e, ...p })) {
      if (v === undefined) continue;
      q.append(k, v as string);
      if (repeat) q.append(k, v as string);
    }
    const s = q.toString();
    return s ? `?${s}` : "";
  });
  const raw = fc.constantFrom(
    "?",
    "?&&&",
    "?=",
    "?limit",
    "?limit=%",
    "?cursor=%zz",
    "?a=%ED%A0%80",
    "?%00=%00",
  );
  return fc.oneof({ weight: 8, arbitrary: structured }, { weight: 1, arbitrary: raw });
}

const printable = fc.string({ unit: "grapheme-ascii", maxLength: 80 }).map((s) => s.replace(/[\r\n]/g, " "));

const authChoice: fc.Arbitrary<AuthChoice> = fc.oneof(
  { weight: 12, arbitrary: fc.constant("main" as const) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("secondary" as const, "revoked" as const, "foreign" as const, "none" as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          "Bearer",
          "Bearer ",
          "Basic dXNlcjpwYXNz",
          "Bearer a b",
          "Token abc",
          "bearer",
          "Bearer \t",
        ),
        fc.stringMatching(/^[a-z0-9]{64}$/).map((k) => `Bearer ${k}`),
        printable.map((s) => `Bearer ${s}`),
        printable,
      )
      .map((raw) => ({ raw })),
  },
);

const contentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      "application/vnd.api+json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=utf-16",
      "application/jsonp",
      "",
      "none",
    ),
  },
  { weight: 1, arbitrary: printable },
);

const extraHeaders = fc.dictionary(
  fc.constantFrom(
    "x-request-id",
    "accept",
    "x-forwarded-for",
    "content-encoding",
    "accept-encoding",
    "origin",
  ),
  printable,
  { maxKeys: 3 },
);

function deep(depth: number, open: string, close: string, inner: string) {
  return `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
}

const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "{",
    '{"a":',
    "nul",
    "undefined",
    "{'a':1}",
    '{"a":1,"a":2}',
    "\ufeff{}",
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    "[]",
    "null",
    "0",
    '""',
    "\u0000",
    '{"a":"\\ud800"}',
    "1e999",
    '{"seconds":1e999}',
  ),
  fc.integer({ min: 60, max: 20_000 }).map((d) => deep(d, "[", "]", "1")),
  fc.integer({ min: 60, max: 20_000 }).map((d) => `{"project":{"settings":${deep(d, '{"a":', "}", "1")}}}`),
  fc
    .integer({ min: 60, max: 20_000 })
    .map((d) => `{"endpoint":{"settings":{"x":${deep(d, "[", "]", "0")}}}}`),
  fc.constant(JSON.stringify({ key_name: "x", pad: "y".repeat(MAX_BODY_BYTES + 10) })),
  fc.string({ unit: "binary", maxLength: 200 }),
);

/** Splices a nest `depth` levels deep wherever the body holds DEEP_PLACEHOLDER (as text: an object that deep would overflow JSON.stringify here first). */
function deepened(value: unknown, round: boolean, depth: number): string {
  const nest = round ? deep(depth, "[", "]", "0") : deep(depth, '{"a":', "}", "0");
  return (JSON.stringify(value) ?? "null").split(`"${DEEP_PLACEHOLDER}"`).join(nest);
}

function bodyArb(doc: SchemaDoc, op: OpenApiOperation): fc.Arbitrary<string | undefined> {
  const options: fc.WeightedArbitrary<string | undefined>[] = [
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: hostileValue.map((v) => JSON.stringify(v) ?? "null") },
    { weight: 2, arbitrary: rawBody },
  ];
  if (op.body) {
    const schema = op.body.schema as JsonSchema;
    options.push(
      {
        weight: 14,
        arbitrary: fromSchema(doc, schema, { hostile: 0.03 }).map((v) => JSON.stringify(v) ?? "null"),
      },
      {
        weight: 4,
        arbitrary: fromSchema(doc, schema, { hostile: 0.3 }).map((v) => JSON.stringify(v) ?? "null"),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            fromSchema(doc, schema, { hostile: 0, deep: true }),
            fc.boolean(),
            fc.integer({ min: 40, max: 12_000 }),
          )
          .map(([v, round, depth]) => deepened(v, round, depth)),
      },
    );
  }
  return fc.oneof(...options);
}

const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS", "HEAD"];

function caseArb(doc: SchemaDoc, op: OpenApiOperation): fc.Arbitrary<Case> {
  const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const params = fc.tuple(...names.map(pathParam));
  return fc
    .record({
      method: fc.oneof(
        { weight: 12, arbitrary: fc.constant(op.method) },
        { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
      ),
      params: names.length ? params : fc.constant([] as string[]),
      query: queryString(doc, op),
      auth: authChoice,
      contentType,
      headers: extraHeaders,
      body: bodyArb(doc, op),
      pick: fc.nat(),
      valid: fc.oneof(
        { weight: 7, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
    })
    .map((r) => {
      let i = 0;
      const path = op.path.replace(/\{\w+\}/g, () => r.params[i++] as string);
      const headers: Record<string, string> = { ...r.headers };
      if (r.contentType !== "none") headers["content-type"] = r.contentType;
      const c: Case = {
        method: r.method,
        path,
        query: r.query,
        auth: r.auth,
        headers,
        ...(r.body === undefined ? {} : { body: r.body }),
        pick: r.pick,
        valid: r.valid,
      };
      // fast-check prints counterexamples with this: keep a 20,000-level body readable.
      Object.defineProperty(c, fc.toStringMethod, {
        value: () => describeCase(c, `${path}${r.query}`, undefined),
      });
      return c;
    });
}

/** Replaces REAL markers with values that exist. */
function resolveMarkers(
  text: string,
  values: Record<RealKind, string>,
  encode: (s: string) => string,
): string {
  return text.replace(REAL_PATTERN, (_m, kind: RealKind) => encode(values[kind]));
}

function describeCase(c: Case, url: string, res: Reply | undefined): string {
  const body =
    c.body === undefined
      ? "(none)"
      : c.body.length > 600
        ? `${c.body.slice(0, 600)}… (${c.body.length} chars)`
        : c.body;
  return [
    `${c.method} ${url}`,
    `auth: ${JSON.stringify(c.auth)}`,
    `headers: ${JSON.stringify(c.headers)}`,
    `body: ${body}`,
    res ? `-> HTTP ${res.status}: ${res.text.slice(0, 800)}` : "",
  ].join("\n");
}

let f: FuzzApp;
let doc: SchemaDoc;
/** Status classes seen per operation: the run must reach the handlers, not only the validators. */
const seen = new Map<string, Map<string, number>>();
let ops: OpenApiOperation[] = [];

beforeAll(async () => {
  const probe = await FuzzApp.create();
  const found = await operationsOf(probe);
  probe.close();
  doc = found.doc as SchemaDoc;
  ops = found.ops;
});
afterAll(() => f?.close());

async function runCase(op: OpenApiOperation, c: Case): Promise<void> {
  await f.ensure();
  const method = c.valid ? op.method : c.method;
  let url: string;
  let body: string | undefined;
  if (c.valid) {
    const valid = await f.validRequest(op, c.pick);
    url = valid.url;
    body = valid.body === undefined ? undefined : JSON.stringify(valid.body);
  } else {
    const values = f.realValues(c.pick);
    url = resolveMarkers(c.path, values, encodeSegment) + resolveMarkers(c.query, values, encodeURIComponent);
    body = c.body === undefined ? undefined : resolveMarkers(c.body, values, (s) => s);
  }
  const headers = { ...c.headers };
  const keys = { main: f.a.key, secondary: f.secondary.key, revoked: f.revoked.key, foreign: f.b.key };
  if (typeof c.auth === "object") headers.authorization = c.auth.raw;
  else if (c.auth !== "none") headers.authorization = `Bearer ${keys[c.auth]}`;
  const before = f.snapshot();
  let res: Reply;
  try {
    res = await f.send(method, url, { headers, ...(body === undefined ? {} : { body }) });
  } catch (err) {
    // A request the WHATWG Request constructor refuses never reaches the server: nothing to check.
    if (err instanceof TypeError) return;
    throw err;
  }
  const stats = seen.get(`${op.method} ${op.path}`) ?? new Map<string, number>();
  seen.set(`${op.method} ${op.path}`, stats);
  const label = res.status < 300 ? "2xx" : String(res.status);
  stats.set(label, (stats.get(label) ?? 0) + 1);
  const where = () => describeCase({ ...c, method, ...(body === undefined ? {} : { body }) }, url, res);
  if (res.status >= 500) throw new Error(`5xx for ${op.method} ${op.path}\n${where()}`);
  if (res.status >= 400 && method !== "HEAD") {
    const ok =
      (res.headers.get("content-type") ?? "").includes("application/json") &&
      typeof res.body === "object" &&
      res.body !== null &&
      typeof res.body.message === "string" &&
      res.body.message.length > 0 &&
      typeof res.body.code === "string" &&
      res.body.code.length > 0;
    if (!ok) throw new Error(`error without a JSON {code, message} body\n${where()}`);
  }
  if (res.status >= 400) {
    const changed = changedTables(before, f.snapshot());
    if (changed.length) throw new Error(`rejected request changed tables ${changed.join(", ")}\n${where()}`);
  }
  const broken = f.invariants();
  if (broken.length)
    throw new Error(`invariants broken after the request:\n${broken.join("\n")}\n${where()}`);
  for (const [name, key] of Object.entries(keys))
    if (res.text.includes(key)) throw new Error(`response echoes the ${name} key's secret\n${where()}`);
}

describe("OpenAPI-driven fuzzing", () => {
  it("covers every operation of the served document", () => {
    expect(ops.length).toBeGreaterThan(40);
    expect(ops.filter((o) => o.path.startsWith("/_emulator/")).length).toBeGreaterThan(5);
  });

  it(
    `${TOTAL_CASES - MIXED_CASES} cases over every operation: no 5xx, JSON errors, rejected requests change nothing`,
    async () => {
      // Products the emulator does not run answer one 404 to everything valid: two cases each.
      const notRun = new Set(PRODUCT_ROUTES.map((r) => r.operationId));
      // A branch's schema is read from its real database: never a 2xx on this compute-less app.
      const noComputes = new Set(["getProjectBranchSchema", "getProjectBranchSchemaComparison"]);
      const answering = ops.filter(
        (op) => !notRun.has(op.operationId ?? "") && !noComputes.has(op.operationId ?? ""),
      );
      const perOp = Math.ceil((TOTAL_CASES - MIXED_CASES) / answering.length);
      let cases = 0;
      for (const op of ops) {
        // A fresh app per operation keeps the tables small; state still accumulates within one.
        f?.close();
        f = await FuzzApp.create();
        await fc.assert(
          fc.asyncProperty(caseArb(doc, op), async (c) => {
            cases++;
            await runCase(op, c);
          }),
          {
            numRuns: notRun.has(op.operationId ?? "") ? 2 : perOp,
            endOnFailure: !process.env.FUZZ_SHRINK,
            ...(SEED === undefined ? {} : { seed: SEED }),
          },
        );
      }
      expect(cases).toBeGreaterThanOrEqual(TOTAL_CASES - MIXED_CASES);
      if (process.env.FUZZ_STATS)
        for (const [name, st] of seen) console.log(name, JSON.stringify(Object.fromEntries(st)));
      // Valid-ish requests must get through: most operations answer 2xx at least once.
      const reached = [...seen.values()].filter((st) => (st.get("2xx") ?? 0) > 0).length;
      expect(reached).toBeGreaterThan(answering.length * (SOAK ? 0.9 : 0.5));
    },
    SOAK ? 1_800_000 : 120_000,
  );

  it(
    `${MIXED_CASES} cases across all operations on one app: the same rules, with requests interacting`,
    async () => {
      f?.close();
      f = await FuzzApp.create();
      const any = fc.oneof(...ops.map((op) => caseArb(doc, op).map((c) => ({ op, c }))));
      let cases = 0;
      await fc.assert(
        fc.asyncProperty(any, async ({ op, c }) => {
          cases++;
          await runCase(op, c);
        }),
        {
          numRuns: MIXED_CASES,
          endOnFailure: !process.env.FUZZ_SHRINK,
          ...(SEED === undefined ? {} : { seed: SEED }),
        },
      );
      expect(cases).toBe(MIXED_CASES);
    },
    SOAK ? 1_800_000 : 120_000,
  );
});
