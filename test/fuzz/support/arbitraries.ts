import fc from "fast-check";

/**
 * fast-check arbitraries for the fuzz suite: values shaped by the served OpenAPI schemas
 * ("valid-ish"), with a chance at every node of something hostile instead: wrong types,
 * oversized and unicode strings, SQL and JSON injection, prototype keys.
 *
 * A string field named like an id can also come out as a REAL marker, resolved at request time
 * to an id of an object that exists (see harness.ts), so valid requests reach the repositories.
 */

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  maxItems?: number;
  minItems?: number;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
};

/** Kinds of real values the harness can substitute. */
export const REAL_KINDS = [
  "project_id",
  "branch_id",
  "endpoint_id",
  "role_name",
  "database_name",
  "operation_id",
  "key_id",
  "org_id",
  "source_org_id",
  "member_id",
  "snapshot_id",
  "foreign_project_id",
  "foreign_branch_id",
  "foreign_endpoint_id",
  "foreign_key_id",
] as const;
export type RealKind = (typeof REAL_KINDS)[number];

/** A marker made only of characters that URL and JSON encoding leave alone. */
export const real = (kind: RealKind) => `zzREAL.${kind}.REALzz`;
export const REAL_PATTERN = /zzREAL\.([a-z_]+)\.REALzz/g;

/** The kind of real value a field or parameter of this name takes, if any. */
export function realKindOf(name: string): RealKind | undefined {
  if (name === "parent_id") return "branch_id";
  if (name === "owner_name") return "role_name";
  if (name === "name") return undefined;
  return (REAL_KINDS as readonly string[]).includes(name) ? (name as RealKind) : undefined;
}

const SQL_INJECTION = [
  "' OR '1'='1",
  "'; DROP TABLE projects; --",
  '" OR ""="',
  "1; SELECT * FROM api_keys --",
  "') UNION SELECT key_hash, 1, 1 FROM api_keys --",
  "%' AND 1=1 --",
  "\\' OR 1=1 /*",
  "_%",
  "%",
  "0x27",
  "$1",
  "?",
];
const JSON_INJECTION = [
  '{"__proto__":{"admin":true}}',
  '","key_name":"x',
  '"}],"x":[{"',
  "\\u0000",
  "\\",
  '\\"',
  "]]]]}}}}",
  "{{{{",
  "null",
  "true",
  "[]",
  "{}",
];
const UNICODE = [
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "\uffff",
  "\ufeff",
  "\u202eevil",
  "e\u0301\u0301\u0301",
  "😀👩‍👩‍👧‍👦",
  "日本語のブランチ",
  "\u200b\u200c\u200d",
  "\r\n\t",
  " ",
  "",
  "\u2028\u2029",
  "𝕳𝖊𝖑𝖑𝖔",
];
const OTHER = [
  "../../etc/passwd",
  "..",
  ".",
  "%s%n%x",
  "%00",
  "%2F",
  "<script>alert(1)</script>",
  "NaN",
  "Infinity",
  "-0",
  "1e309",
  "0x10",
  "9007199254740993",
  "-1",
  "0",
  "2025-13-45T99:99:99Z",
  "9999-12-31T23:59:59.999999Z",
  "0000-01-01T00:00:00Z",
  "true",
  "null",
  "undefined",
  "constructor",
  "__proto__",
  "prototype",
  "toString",
  "hasOwnProperty",
];

/** Strings a careful attacker or a buggy client would send. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SQL_INJECTION, ...JSON_INJECTION, ...UNICODE, ...OTHER) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40, unit: "binary" }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20, unit: "grapheme" }) },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 5000 }).map((n) => "x".repeat(n)) },
  { weight: 1, arbitrary: fc.string({ minLength: 250, maxLength: 300 }) },
);

const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    0.1,
    1e-300,
    1e300,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_SAFE_INTEGER,
    2 ** 63,
    0.25,
    7,
    7.25,
    31622400.5,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

const nastyKey = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "prototype", "toString", "", " ", "a.b", "$where", "\u0000"),
  fc.string({ maxLength: 10 }),
);

/** Any JSON value, hostile leaning. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(nastyKey, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }) },
);

export interface SchemaDoc {
  components?: { schemas?: Record<string, JsonSchema> };
}

const COMPUTE_UNITS = [0.25, 0.5, 1, 2, 3, 4, 5, 6, 7];

/** A valid-ish value for `schema`, with probability `hostile` of a hostile value at each node. */
/** Where a schema takes any JSON at all, a `deep` value may be this placeholder, later spliced as a deep nest. */
export const DEEP_PLACEHOLDER = "zzDEEPzz";

export function fromSchema(
  doc: SchemaDoc,
  schema: JsonSchema,
  opts: { hostile: number; field?: string; depth?: number; deep?: boolean },
): fc.Arbitrary<unknown> {
  const depth = opts.depth ?? 0;
  const plain = plainFromSchema(doc, schema, { ...opts, depth });
  if (opts.hostile <= 0 || depth > 6) return plain;
  const h = Math.max(1, Math.round(opts.hostile * 100));
  return fc.oneof({ weight: 100 - h, arbitrary: plain }, { weight: h, arbitrary: hostileValue });
}

function resolve(doc: SchemaDoc, schema: JsonSchema): { schema: JsonSchema; name?: string } {
  if (!schema.$ref) return { schema };
  const name = schema.$ref.replace("#/components/schemas/", "");
  const target = doc.components?.schemas?.[name];
  if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
  return { schema: target, name };
}

function plainFromSchema(
  doc: SchemaDoc,
  raw: JsonSchema,
  opts: { hostile: number; field?: string; depth: number; deep?: boolean },
): fc.Arbitrary<unknown> {
  const { schema, name } = resolve(doc, raw);
  const next = (s: JsonSchema, field?: string) =>
    fromSchema(doc, s, {
      hostile: opts.hostile,
      depth: opts.depth + 1,
      ...(field ? { field } : {}),
      ...(opts.deep ? { deep: true } : {}),
    });
  const anything = opts.deep
    ? fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(DEEP_PLACEHOLDER))
    : fc.jsonValue({ maxDepth: 2 });
  if (name === "ComputeUnit")
    return fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...COMPUTE_UNITS) },
      fc.double({ min: 0, max: 8 }),
    );
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => next(s, opts.field)));
  if (schema.allOf)
    return next(Object.assign({}, ...schema.allOf.map((s) => resolve(doc, s).schema)), opts.field);
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((type) => next({ ...schema, type }, opts.field)));
  switch (schema.type) {
    case "object": {
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, next(s, k)])), {
        requiredKeys: Object.keys(props).filter((k) => required.has(k)),
      }) as fc.Arbitrary<Record<string, unknown>>;
      const minKeys = opts.deep ? 1 : 0;
      const extra =
        schema.additionalProperties && typeof schema.additionalProperties === "object"
          ? fc.dictionary(fc.string({ maxLength: 12 }), next(schema.additionalProperties), {
              minKeys,
              maxKeys: 3,
            })
          : Object.keys(props).length === 0
            ? fc.dictionary(fc.string({ maxLength: 12 }), anything, { minKeys, maxKeys: 3 })
            : fc.constant({});
      const stray = fc.option(fc.dictionary(nastyKey, hostileValue, { maxKeys: 2 }), { freq: 8, nil: {} });
      return fc.tuple(record, extra, stray).map(([r, e, s]) => ({ ...e, ...s, ...r }));
    }
    case "array":
      return fc.array(next(schema.items ?? {}), {
        minLength: Math.min(schema.minItems ?? 0, 3),
        maxLength: Math.min(schema.maxItems ?? 3, 3),
      });
    case "string":
      return stringFor(schema, opts.field);
    case "integer": {
      const min =
        schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1000);
      const max =
        schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1_000_000);
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
    }
    case "number": {
      const min = schema.minimum ?? schema.exclusiveMinimum ?? -1000;
      const max = schema.maximum ?? schema.exclusiveMaximum ?? 1_000_000;
      return fc
        .oneof(
          fc.double({ min, max, noNaN: true }),
          fc.integer({ min: Math.ceil(min), max: Math.floor(max) }),
        )
        .filter(
          (n) => (schema.exclusiveMinimum === undefined || n > schema.exclusiveMinimum) && !Object.is(n, -0),
        );
    }
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    default:
      return anything;
  }
}

function stringFor(schema: JsonSchema, field: string | undefined): fc.Arbitrary<string> {
  const kind = field ? realKindOf(field) : undefined;
  let base: fc.Arbitrary<string>;
  if (schema.format === "date-time")
    base = fc
      .date({
        min: new Date("2000-01-01T00:00:00Z"),
        max: new Date("2100-01-01T00:00:00Z"),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
  else if (schema.format === "email") base = fc.emailAddress();
  else if (schema.pattern) base = fc.stringMatching(new RegExp(schema.pattern));
  else {
    const bounds = { minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 24, 300) };
    base = fc.oneof(
      { weight: 3, arbitrary: fc.string({ ...bounds, unit: "grapheme-ascii" }) },
      { weight: 1, arbitrary: fc.string({ ...bounds, unit: "grapheme" }) },
    );
  }
  if (field === "name" || field === "key_name")
    base = fc.oneof(
      base,
      fc.uuid().map((u) => `fz-${u.slice(0, 8)}`),
    );
  if (!kind) return base;
  return fc.oneof({ weight: 4, arbitrary: fc.constant(real(kind)) }, { weight: 1, arbitrary: base });
}
