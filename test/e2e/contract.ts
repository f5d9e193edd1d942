import fs from "node:fs";
import path from "node:path";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import YAML from "yaml";
import { DEVIATIONS, type Deviation } from "./contract-deviations.js";

/**
 * The contract check: every response the e2e suite receives is validated against the schema the
 * public Neon v2 OpenAPI document (shipped in @neondatabase/api-client) gives for its
 * operationId and status. Mismatches the spec demands are allowed only through
 * contract-deviations.ts; everything else is a failure.
 */

export const PUBLIC_DOC_PATH = path.resolve(
  "node_modules/@neondatabase/api-client/public-v2-for-users.gen.yaml",
);
export const API_PREFIX = "/api/v2";

/** One request/response pair as seen on the wire by the recording proxy. */
export interface Exchange {
  /** The test step that sent it (set by the harness before each step). */
  step: string;
  method: string;
  /** Path without the query string, including /api/v2. */
  path: string;
  query: string;
  status: number;
  contentType: string;
  body: string;
}

export interface ContractProblem {
  step: string;
  request: string;
  problem: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface PublicOperation {
  operationId: string;
  method: string;
  template: string;
  regex: RegExp;
  /** Literal segments count, so `/projects/shared` beats `/projects/{project_id}`. */
  literalSegments: number;
  responses: JsonObject;
}

const DOC_ID = "neon-public-v2.json";
const KNOWN_UNCHECKED_FORMATS = ["uint64", "int"];

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * OpenAPI 3.0 -> JSON Schema: `nullable: true` becomes a type array (or an anyOf with null when
 * there is no type), and local refs point into the document registered with ajv.
 */
export function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$ref" && typeof v === "string" && v.startsWith("#/")) out[k] = `${DOC_ID}${v}`;
    else out[k] = toJsonSchema(v);
  }
  if (out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === "string") {
      out.type = [out.type, "null"];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
      return out;
    }
    return { anyOf: [out, { type: "null" }] };
  }
  return out;
}

function templateRegex(template: string): RegExp {
  const escaped = template
    .split("/")
    .map((seg) => (/^\{[^}]+\}$/.test(seg) ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${escaped}$`);
}

export class Contract {
  readonly operations: PublicOperation[] = [];
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(docPath = PUBLIC_DOC_PATH) {
    const doc = YAML.parse(fs.readFileSync(docPath, "utf8")) as JsonObject;
    this.ajv = new Ajv({ strict: false, allErrors: true, verbose: true });
    // ajv-formats is CommonJS; its default export arrives wrapped under ESM interop.
    const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
      addFormatsModule) as (ajv: Ajv) => Ajv;
    addFormats(this.ajv);
    for (const f of KNOWN_UNCHECKED_FORMATS) this.ajv.addFormat(f, true);
    // Formats the document uses that no validator knows are accepted as annotations.
    const text = JSON.stringify(doc);
    for (const m of text.matchAll(/"format":"([^"]+)"/g)) {
      const f = m[1] as string;
      if (!this.ajv.formats[f]) this.ajv.addFormat(f, true);
    }
    this.ajv.addSchema({ $id: DOC_ID, components: toJsonSchema(doc.components as Json) } as object);

    for (const [template, item] of Object.entries(doc.paths as JsonObject)) {
      if (!isObject(item)) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!isObject(op) || typeof op.operationId !== "string" || !isObject(op.responses)) continue;
        this.operations.push({
          operationId: op.operationId,
          method: method.toUpperCase(),
          template,
          regex: templateRegex(template),
          literalSegments: template.split("/").filter((s) => s && !s.startsWith("{")).length,
          responses: op.responses,
        });
      }
    }
  }

  /** Every operationId of the public document. */
  operationIds(): Set<string> {
    return new Set(this.operations.map((op) => op.operationId));
  }

  /** The public operation a request maps to, or undefined for a route the public API lacks. */
  findOperation(method: string, apiPath: string): PublicOperation | undefined {
    const rel = apiPath.startsWith(API_PREFIX) ? apiPath.slice(API_PREFIX.length) : apiPath;
    const candidates = this.operations.filter((o) => o.method === method.toUpperCase() && o.regex.test(rel));
    candidates.sort((a, b) => b.literalSegments - a.literalSegments);
    return candidates[0];
  }

  private validator(op: PublicOperation, statusKey: string): ValidateFunction | null {
    const cacheKey = `${op.operationId} ${statusKey}`;
    const cached = this.validators.get(cacheKey);
    if (cached) return cached;
    const response = op.responses[statusKey];
    const resolved =
      isObject(response) && typeof response.$ref === "string"
        ? this.resolveResponseRef(response.$ref)
        : response;
    const content = isObject(resolved) && isObject(resolved.content) ? resolved.content : undefined;
    const media = content?.["application/json"];
    if (!isObject(media) || media.schema === undefined) return null;
    const fn = this.ajv.compile(toJsonSchema(media.schema) as object);
    this.validators.set(cacheKey, fn);
    return fn;
  }

  private resolveResponseRef(ref: string): Json {
    const doc = this.ajv.getSchema(DOC_ID)?.schema as JsonObject;
    let node: Json = doc;
    for (const part of ref.replace(/^#\//, "").split("/"))
      node = isObject(node) ? (node[part] ?? null) : null;
    return node;
  }

  /** Problems with one exchange; deviations listed in contract-deviations.ts are filtered out. */
  check(ex: Exchange, used?: Set<Deviation>): ContractProblem[] {
    const request = `${ex.method} ${ex.path}${ex.query}`;
    const problems: ContractProblem[] = [];
    const report = (problem: string) => problems.push({ step: ex.step, request, problem });
    const op = this.findOperation(ex.method, ex.path);
    if (!op) {
      report(`no operation of the public API matches ${ex.method} ${ex.path}`);
      return problems;
    }
    const statusKey = String(ex.status);
    const hasStatus = op.responses[statusKey] !== undefined;
    if (!hasStatus && (ex.status < 400 || op.responses.default === undefined)) {
      report(
        `${op.operationId} answered ${ex.status}; the public API documents ${Object.keys(op.responses).join(", ")}`,
      );
      return problems;
    }
    const validate = this.validator(op, hasStatus ? statusKey : "default");
    // A documented answer without content (204 No Content) has no body to type.
    if (ex.status < 300 && validate && !/^application\/json\b/i.test(ex.contentType))
      report(`${op.operationId} ${ex.status}: Content-Type is "${ex.contentType}", not application/json`);
    if (!validate && hasStatus && ex.body !== "" && ex.status === 204)
      report(`${op.operationId} 204: a body where the public API sends none`);
    if (!validate) return problems;
    let body: unknown;
    try {
      body = JSON.parse(ex.body);
    } catch {
      report(`${op.operationId} ${ex.status}: body is not JSON: ${ex.body.slice(0, 200)}`);
      return problems;
    }
    if (validate(body)) return problems;
    for (const err of validate.errors ?? []) {
      const deviation = DEVIATIONS.find((d) => d.matches(op.operationId, err, body));
      if (deviation) {
        used?.add(deviation);
        continue;
      }
      report(`${op.operationId} ${ex.status}: ${describeError(err)}`);
    }
    return problems;
  }

  /** Checks every exchange; returns readable lines, empty when all conform. */
  checkAll(exchanges: readonly Exchange[], used?: Set<Deviation>): string[] {
    return exchanges
      .flatMap((ex) => this.check(ex, used))
      .map((p) => `[${p.step}] ${p.request}: ${p.problem}`);
  }

  /** The public operationIds the recorded traffic reached. */
  operationIdsOf(exchanges: readonly Exchange[]): Set<string> {
    const ids = new Set<string>();
    for (const ex of exchanges) {
      const op = this.findOperation(ex.method, ex.path);
      if (op) ids.add(op.operationId);
    }
    return ids;
  }
}

export function describeError(err: ErrorObject): string {
  const where = err.instancePath || "(body)";
  const extra =
    err.keyword === "enum"
      ? ` (allowed: ${(err.params as { allowedValues: unknown[] }).allowedValues.join(", ")})`
      : err.keyword === "additionalProperties"
        ? ` (${(err.params as { additionalProperty: string }).additionalProperty})`
        : "";
  return `${where} ${err.message ?? err.keyword}${extra}`;
}

let shared: Contract | undefined;
/** One parsed document per test process (parsing and compiling it takes a moment). */
export function publicContract(): Contract {
  shared ??= new Contract();
  return shared;
}
