import { z } from "@hono/zod-openapi";
import { Operation } from "../operations/schema.js";
import { BoundedStringMap, noNul, ResourceId, settingsWithinSize, Timestamp } from "../schema.js";
import { COMPUTE_SIZES_TEXT, isComputeSize, pgSettingProblem, SUSPEND_TIMEOUT_MAX } from "./rules.js";

export const ComputeUnit = z
  .number()
  .refine(isComputeSize, { message: `must be one of the compute sizes ${COMPUTE_SIZES_TEXT}` })
  .openapi("ComputeUnit", { description: `Compute units: one of ${COMPUTE_SIZES_TEXT}` });

export const SuspendTimeoutSeconds = z
  .number()
  .int("must be a whole number of seconds")
  .min(-1, "must be -1 (never suspend), 0 (default, 300 s) or up to 604800 (7 days)")
  .max(SUSPEND_TIMEOUT_MAX, "must be at most 604800 seconds (7 days)")
  .openapi("SuspendTimeoutSeconds");

/** An endpoint's (or a project's default) server settings: no setting that reaches the host. */
export const PgSettings = BoundedStringMap.superRefine((map, ctx) => {
  for (const name of Object.keys(map)) {
    const problem = pgSettingProblem(name);
    if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
  }
});

export const EndpointType = z.enum(["read_write", "read_only"]).openapi("EndpointType");
export const EndpointState = z.enum(["init", "active", "idle"]).openapi("EndpointState");
const EndpointSettings = z
  .object({ pg_settings: PgSettings.optional(), pgbouncer_settings: BoundedStringMap.optional() })
  .catchall(z.unknown())
  .superRefine(settingsWithinSize)
  .openapi("EndpointSettingsData");

export const Endpoint = z
  .object({
    host: z.string(),
    id: z.string(),
    name: z.string().optional(),
    project_id: z.string(),
    branch_id: z.string(),
    autoscaling_limit_min_cu: z.number(),
    autoscaling_limit_max_cu: z.number(),
    region_id: z.string(),
    type: EndpointType,
    current_state: EndpointState,
    pending_state: EndpointState.optional(),
    settings: z.record(z.string(), z.unknown()),
    pooler_enabled: z.boolean(),
    pooler_mode: z.string(),
    disabled: z.boolean(),
    passwordless_access: z.boolean(),
    last_active: Timestamp.optional(),
    creation_source: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    started_at: Timestamp.optional(),
    suspended_at: Timestamp.optional(),
    proxy_host: z.string(),
    suspend_timeout_seconds: z.number().int(),
    provisioner: z.string(),
  })
  .openapi("Endpoint");

const endpointOptionFields = {
  settings: EndpointSettings.optional(),
  autoscaling_limit_min_cu: ComputeUnit.optional(),
  autoscaling_limit_max_cu: ComputeUnit.optional(),
  provisioner: z.string().optional(),
  suspend_timeout_seconds: SuspendTimeoutSeconds.optional(),
};

export const BranchCreateRequestEndpointOptions = z
  .object({ type: EndpointType, ...endpointOptionFields })
  .openapi("BranchCreateRequestEndpointOptions");

const endpointAttributes = {
  ...endpointOptionFields,
  region_id: z.string().optional(),
  pooler_enabled: z.boolean().optional(),
  pooler_mode: z.literal("transaction").optional(),
  disabled: z.boolean().optional(),
  passwordless_access: z.boolean().optional(),
  name: z
    .string()
    .min(1)
    .max(64, "must be at most 64 characters")
    .refine(...noNul)
    .optional(),
};

export const EndpointCreateRequest = z
  .object({ endpoint: z.object({ branch_id: ResourceId, type: EndpointType, ...endpointAttributes }) })
  .openapi("EndpointCreateRequest");
export const EndpointUpdateRequest = z
  .object({ endpoint: z.object({ branch_id: ResourceId.optional(), ...endpointAttributes }) })
  .openapi("EndpointUpdateRequest");

export const EndpointOperations = z.object({ endpoint: Endpoint, operations: z.array(Operation) });

export type EndpointCreateInput = z.infer<typeof EndpointCreateRequest>["endpoint"];
export type EndpointUpdateInput = z.infer<typeof EndpointUpdateRequest>["endpoint"];
/** The endpoint options a branch create takes (type and compute settings). */
export type EndpointOptions = z.infer<typeof BranchCreateRequestEndpointOptions>;
