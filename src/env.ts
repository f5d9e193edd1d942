import path from "node:path";
import { z } from "zod";
import { OPERATION_ACTIONS, type OperationAction } from "./control-plane/operations/rules.js";
import { LIMIT_NAMES, type LimitName } from "./plans.js";

/**
 * The only reader of process.env. Every variable is validated here, so a bad value stops
 * the process at start with a message naming the variable, instead of failing later.
 */

const KEY_PATTERN = /^[a-z0-9]{64}$/;

/** `name=value` pairs, comma-separated, each name from `names` and each value a whole number >= min. */
function pairsSchema<N extends string>(names: readonly N[], what: (name: N) => string, min: number) {
  return z.string().transform((raw, ctx) => {
    const out: Partial<Record<N, number>> = {};
    for (const part of raw
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      const [name, text] = part.split("=");
      if (!name || !names.includes(name as N)) {
        ctx.addIssue({ code: "custom", message: `unknown name "${name}" (allowed: ${names.join(", ")})` });
        return z.NEVER;
      }
      const value = Number(text);
      if (text === undefined || text.trim() === "" || !Number.isInteger(value) || value < min) {
        ctx.addIssue({ code: "custom", message: `${what(name as N)} must be a whole number >= ${min}` });
        return z.NEVER;
      }
      out[name as N] = value;
    }
    return out;
  });
}

const durationsSchema = pairsSchema<OperationAction>(
  OPERATION_ACTIONS,
  (action) => `duration for ${action} (milliseconds)`,
  0,
);

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4444),
  HOST: z.string().min(1).default("127.0.0.1"),
  NEON_EMULATOR_DB: z.string().min(1).default(path.join("data", "neon-emulator.db")),
  NEON_EMULATOR_API_KEY: z
    .string()
    .regex(KEY_PATTERN, "must be exactly 64 characters of lowercase letters and digits")
    .optional(),
  NEON_EMULATOR_CLOCK: z.enum(["real", "manual"]).default("real"),
  NEON_EMULATOR_CLOCK_START: z.iso
    .datetime({ message: "must be an ISO 8601 UTC timestamp such as 2025-01-01T00:00:00Z" })
    .optional(),
  NEON_EMULATOR_PLAN: z.enum(["paid", "free"]).default("paid"),
  NEON_EMULATOR_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+$/, "must be a DNS domain such as neon.tech")
    .default("neon.tech"),
  NEON_EMULATOR_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  NEON_EMULATOR_OPERATION_MS: durationsSchema.default({}),
  // Overrides of the plans' limits for every account, e.g. projects=5,branches=3,computes=4.
  NEON_EMULATOR_LIMITS: pairsSchema<LimitName>(LIMIT_NAMES, (name) => `the ${name} limit`, 1).default({}),
  NEON_EMULATOR_CHECK_INTERVAL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86400)
    .default(3600),
  // Neon removes operations older than six months; 0 keeps every operation.
  NEON_EMULATOR_OPERATION_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(180),
  // Neon's recovery window for a deleted project: 7 days. 0 deletes at once.
  NEON_EMULATOR_PROJECT_RECOVERY_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 86400)
    .default(7 * 86400),
  NEON_EMULATOR_SEED: z.string().min(1).optional(),
  NEON_EMULATOR_COMPUTE: z.enum(["none", "postgres"]).default("postgres"),
  // Unset: 5432, or a free port when 5432 is taken. Set: exactly that port (0 picks a free one).
  NEON_EMULATOR_PG_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  NEON_EMULATOR_PG_AUTH_TIMEOUT: z.coerce.number().int().min(1).max(600).default(10),
  // Connections the HTTP port holds at once, and Postgres clients not yet logged in at the front door.
  NEON_EMULATOR_MAX_CONNECTIONS: z.coerce.number().int().min(10).max(1_000_000).default(2000),
  NEON_EMULATOR_POOLER_MAX_CLIENTS: z.coerce.number().int().min(1).max(100_000).default(10_000),
  NEON_EMULATOR_PG_BIN: z.string().min(1).optional(),
  NEON_EMULATOR_DATA_DIR: z.string().min(1).optional(),
  // neon: Neon's API rate limits (platform/rate-limiter.ts), answered 429; off: none.
  NEON_EMULATOR_RATE_LIMIT: z.enum(["off", "neon"]).default("off"),
  NEON_EMULATOR_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "silent"]).default("info"),
});

export type Env = z.infer<typeof envSchema>;

export class EnvError extends Error {}

export function readEnv(source: NodeJS.ProcessEnv = process.env): Env {
  // Empty strings mean "unset", as they do for most tools.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new EnvError(`Invalid environment configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}
