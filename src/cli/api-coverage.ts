/**
 * `npm run api-coverage`: every operation of Neon's public v2 OpenAPI document (shipped inside
 * @neondatabase/api-client) and whether the emulator serves it, read from the document the
 * emulator itself serves at /openapi.json (built in process over an in-memory database).
 * `--json` prints the same as JSON; `--missing` lists only what is not served.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import pino from "pino";
import YAML from "yaml";
import { createApp } from "../app.js";
import { DEFAULT_OPERATION_MS } from "../control-plane/operations/rules.js";
import { ManualClock } from "../platform/clock.js";
import { openStorage } from "../platform/db.js";
import { IdGenerator } from "../platform/ids.js";
import { Worker } from "../worker/loop.js";

type Paths = Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
const METHODS = new Set(["get", "put", "post", "patch", "delete"]);

interface Operation {
  method: string;
  path: string;
  operationId: string;
  tag: string;
}

function operationsOf(paths: Paths): Operation[] {
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? "",
        tag: op.tags?.[0] ?? "",
      })),
  );
}

/** `{project_id}` and `{id}` are the same route: compare paths with parameter names erased. */
const shape = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}/g, "{}")}`;

async function servedDocument(): Promise<{ paths: Paths }> {
  const storage = openStorage(":memory:");
  try {
    const ctx = {
      db: storage.db,
      clock: new ManualClock(0),
      ids: new IdGenerator(),
      config: {
        plan: "paid" as const,
        domain: "neon.tech",
        maxBodyBytes: 1024,
        operationMs: { ...DEFAULT_OPERATION_MS },
        checkIntervalSeconds: 3600,
        operationRetentionDays: 180,
        projectRecoverySeconds: 7 * 86400,
      },
    };
    const app = createApp(ctx, { logger: pino({ level: "silent" }), worker: new Worker(ctx, {}) });
    return (await (await app.request("/openapi.json")).json()) as { paths: Paths };
  } finally {
    storage.close();
  }
}

/** Every public operation, and whether the emulator serves it. */
export async function apiCoverage() {
  const file = join(
    dirname(createRequire(import.meta.url).resolve("@neondatabase/api-client/package.json")),
    "public-v2-for-users.gen.yaml",
  );
  const publicOps = operationsOf((YAML.parse(readFileSync(file, "utf8")) as { paths: Paths }).paths);
  const served = new Set(operationsOf((await servedDocument()).paths).map((op) => shape(op.method, op.path)));
  return publicOps.map((op) => ({ ...op, served: served.has(shape(op.method, op.path)) }));
}

async function main(): Promise<void> {
  const args = new Set(process.argv.slice(2));
  const rows = await apiCoverage();
  const count = rows.filter((r) => r.served).length;
  if (args.has("--json")) {
    console.log(JSON.stringify({ served: count, total: rows.length, operations: rows }, null, 2));
    return;
  }
  for (const r of rows)
    if (!args.has("--missing") || !r.served)
      console.log(`${r.served ? "served " : "MISSING"}  ${r.method.padEnd(6)} ${r.path}  (${r.operationId})`);
  console.log(`\n${count} of ${rows.length} public operations served`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
