import { z } from "zod";
import { COMPUTE_SIZES_TEXT, isComputeSize, SUSPEND_TIMEOUT_MAX } from "../control-plane/endpoints/rules.js";
import { REGION_IDS } from "../control-plane/regions/rules.js";
import { PgName } from "../control-plane/schema.js";

/**
 * The declarative seed file (NEON_EMULATOR_SEED). Ids and keys left out are derived from `seed`,
 * so applying the same file to an empty database always yields the same ids, names and keys.
 */
const Cu = z.number().refine(isComputeSize, `must be one of ${COMPUTE_SIZES_TEXT}`);
const Id = z.string().regex(/^[a-z0-9-]{1,60}$/, "must be 1-60 characters of a-z, 0-9 and -");

const SeedEndpoint = z.strictObject({
  id: Id.startsWith("ep-", "endpoint ids start with ep-").optional(),
  type: z.enum(["read_write", "read_only"]).default("read_write"),
  name: z.string().max(64).optional(),
  min_cu: Cu.optional(),
  max_cu: Cu.optional(),
  suspend_timeout_seconds: z.number().int().min(-1).max(SUSPEND_TIMEOUT_MAX).optional(),
  state: z.enum(["active", "idle"]).default("active"),
  disabled: z.boolean().optional(),
  pooler_enabled: z.boolean().optional(),
});

const SeedBranch = z.strictObject({
  id: Id.startsWith("br-", "branch ids start with br-").optional(),
  name: z.string().min(1).max(256),
  parent: z.string().optional().describe("name of the parent branch; omitted for the default branch"),
  default: z.boolean().optional(),
  protected: z.boolean().optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  roles: z.array(z.strictObject({ name: PgName, password: z.string().min(1).optional() })).default([]),
  databases: z.array(z.strictObject({ name: PgName, owner: z.string().min(1) })).default([]),
  endpoints: z.array(SeedEndpoint).default([]),
});

const SeedProject = z.strictObject({
  id: Id.optional(),
  name: z.string().min(1).max(256),
  region_id: z
    .string()
    .refine((r) => REGION_IDS.includes(r), `must be one of ${REGION_IDS.join(", ")}`)
    .optional(),
  pg_version: z.number().int().min(14).max(18).optional(),
  locked: z.boolean().optional(),
  history_retention_seconds: z.number().int().min(0).max(2_592_000).optional(),
  branches: z.array(SeedBranch).min(1, "a project needs at least its default branch"),
  /** Record finished operations for everything the seed created, dated in the past. */
  history: z.boolean().default(true),
});

const SeedAccount = z.strictObject({
  id: z.uuid().optional(),
  name: z.string().min(1).max(256),
  email: z.email(),
  plan: z.enum(["paid", "free"]).optional(),
  default: z.boolean().optional(),
  keys: z
    .array(
      z.strictObject({
        name: z.string().min(1).max(64),
        key: z
          .string()
          .regex(/^[a-z0-9]{64}$/, "must be 64 characters of a-z and 0-9")
          .optional(),
      }),
    )
    .default([]),
  projects: z.array(SeedProject).default([]),
});

export const SeedFile = z.strictObject({
  $schema: z.string().optional(),
  seed: z
    .string()
    .min(1)
    .optional()
    .describe("makes generated ids and keys deterministic; defaults to the file's hash"),
  accounts: z.array(SeedAccount).min(1, "a seed needs at least one account"),
});

export type SeedFile = z.infer<typeof SeedFile>;
export type SeedProject = z.infer<typeof SeedProject>;
