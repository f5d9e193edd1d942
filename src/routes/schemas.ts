import { z } from "@hono/zod-openapi";
import { COMPUTE_SIZES_TEXT, isComputeSize, SUSPEND_TIMEOUT_MAX } from "../domain/compute.js";
import { OPERATION_ACTIONS, OPERATION_STATUSES } from "../domain/operations.js";

/**
 * Zod schemas shared by the routes. The same objects validate requests and generate the served
 * OpenAPI document, so /openapi.json cannot drift from what the server accepts and returns.
 * Names and shapes follow the public Neon v2 OpenAPI document.
 */

export const ResourceId = z.string().regex(/^[a-z0-9-]{1,60}$/, "must be 1-60 characters of a-z, 0-9 and -");
const Timestamp = z.string().openapi({ format: "date-time", example: "2025-01-01T00:00:00Z" });
const StringMap = z.record(z.string(), z.string());

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

export const PgVersion = z
  .number()
  .int()
  .min(14, "must be 14 to 18")
  .max(18, "must be 14 to 18")
  .openapi("PgVersion");

export const ErrorBody = z
  .object({ code: z.string(), message: z.string(), request_id: z.string().optional() })
  .openapi("GeneralError");

// Operations

export const Operation = z
  .object({
    id: z.string().uuid(),
    project_id: z.string(),
    branch_id: z.string().optional(),
    endpoint_id: z.string().optional(),
    action: z.enum(OPERATION_ACTIONS),
    status: z.enum(OPERATION_STATUSES),
    error: z.string().optional(),
    failures_count: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
    total_duration_ms: z.number().int(),
  })
  .openapi("Operation");

export const OperationsResponse = z.object({ operations: z.array(Operation) });
export const Pagination = z.object({ cursor: z.string() }).openapi("Pagination");

// API keys

export const ApiKeyCreateRequest = z
  .object({ key_name: z.string().min(1, "must not be empty").max(64, "must be at most 64 characters") })
  .openapi("ApiKeyCreateRequest");
export const ApiKeyCreateResponse = z
  .object({
    id: z.number().int(),
    key: z.string(),
    name: z.string(),
    created_at: Timestamp,
    created_by: z.string(),
  })
  .openapi("ApiKeyCreateResponse");
export const ApiKeysListResponseItem = z
  .object({
    id: z.number().int(),
    name: z.string(),
    created_at: Timestamp,
    created_by: z.object({ id: z.string(), name: z.string(), image: z.string() }),
    last_used_at: Timestamp.nullable(),
    last_used_from_addr: z.string(),
  })
  .openapi("ApiKeysListResponseItem");
export const ApiKeyRevokeResponse = z
  .object({
    id: z.number().int(),
    name: z.string(),
    created_at: Timestamp,
    created_by: z.string(),
    last_used_at: Timestamp.nullable(),
    last_used_from_addr: z.string(),
    revoked: z.boolean(),
  })
  .openapi("ApiKeyRevokeResponse");

// Endpoints

export const EndpointType = z.enum(["read_write", "read_only"]).openapi("EndpointType");
export const EndpointState = z.enum(["init", "active", "idle"]).openapi("EndpointState");
const EndpointSettings = z
  .object({ pg_settings: StringMap.optional(), pgbouncer_settings: StringMap.optional() })
  .catchall(z.unknown())
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
  name: z.string().max(64, "must be at most 64 characters").optional(),
};

export const EndpointCreateRequest = z
  .object({ endpoint: z.object({ branch_id: ResourceId, type: EndpointType, ...endpointAttributes }) })
  .openapi("EndpointCreateRequest");
export const EndpointUpdateRequest = z
  .object({ endpoint: z.object({ branch_id: ResourceId.optional(), ...endpointAttributes }) })
  .openapi("EndpointUpdateRequest");

export const EndpointOperations = z.object({ endpoint: Endpoint, operations: z.array(Operation) });

// Branches

export const Branch = z
  .object({
    id: z.string(),
    project_id: z.string(),
    parent_id: z.string().optional(),
    parent_lsn: z.string().optional(),
    parent_timestamp: Timestamp.optional(),
    name: z.string(),
    current_state: z.string(),
    pending_state: z.string().optional(),
    state_changed_at: Timestamp,
    logical_size: z.number().int(),
    creation_source: z.string(),
    primary: z.boolean(),
    default: z.boolean(),
    protected: z.boolean(),
    cpu_used_sec: z.number().int(),
    compute_time_seconds: z.number().int(),
    active_time_seconds: z.number().int(),
    written_data_bytes: z.number().int(),
    data_transfer_bytes: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
    expires_at: Timestamp.optional(),
    init_source: z.string(),
    created_by: z.object({ name: z.string(), image: z.string() }),
  })
  .openapi("Branch");

export const Annotation = z
  .object({
    object: z.object({ type: z.string(), id: z.string() }),
    value: StringMap,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("AnnotationData");

export const BranchCreateRequest = z
  .object({
    branch: z
      .object({
        parent_id: ResourceId.optional(),
        name: z.string().min(1).max(256).optional(),
        parent_lsn: z.string().optional(),
        parent_timestamp: z.iso.datetime().optional(),
        protected: z.boolean().optional(),
        init_source: z.string().optional(),
        expires_at: z.iso.datetime({ offset: true }).optional(),
      })
      .optional(),
    endpoints: z.array(BranchCreateRequestEndpointOptions).max(10).optional(),
    annotation_value: StringMap.optional(),
  })
  .openapi("BranchCreateRequest");

export const BranchUpdateRequest = z
  .object({
    branch: z.object({
      name: z.string().min(1).max(256).optional(),
      protected: z.boolean().optional(),
      expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
    }),
  })
  .openapi("BranchUpdateRequest");

// Roles and databases

export const Role = z
  .object({
    branch_id: z.string(),
    name: z.string(),
    password: z.string().optional(),
    protected: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Role");

const PgName = z
  .string()
  .min(1, "must not be empty")
  .max(63, "must be at most 63 characters (a Postgres identifier)")
  .refine((s) => !s.includes("\u0000"), "must not contain NUL characters");

export const RoleCreateRequest = z
  .object({ role: z.object({ name: PgName, no_login: z.boolean().optional() }) })
  .openapi("RoleCreateRequest");

export const Database = z
  .object({
    id: z.number().int(),
    branch_id: z.string(),
    name: z.string(),
    owner_name: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Database");

export const DatabaseCreateRequest = z
  .object({ database: z.object({ name: PgName, owner_name: PgName }) })
  .openapi("DatabaseCreateRequest");
export const DatabaseUpdateRequest = z
  .object({ database: z.object({ name: PgName.optional(), owner_name: PgName.optional() }) })
  .openapi("DatabaseUpdateRequest");

// Projects

export const DefaultEndpointSettings = z
  .object({
    pg_settings: StringMap.optional(),
    pgbouncer_settings: StringMap.optional(),
    autoscaling_limit_min_cu: ComputeUnit.optional(),
    autoscaling_limit_max_cu: ComputeUnit.optional(),
    suspend_timeout_seconds: SuspendTimeoutSeconds.optional(),
  })
  .openapi("DefaultEndpointSettings");

const ProjectSettings = z.record(z.string(), z.unknown()).openapi("ProjectSettingsData");
const HistoryRetention = z.number().int().min(0).max(2_592_000, "must be at most 2592000 seconds (30 days)");

const projectCommon = {
  id: z.string(),
  platform_id: z.string(),
  region_id: z.string(),
  name: z.string(),
  provisioner: z.string(),
  default_endpoint_settings: z.record(z.string(), z.unknown()),
  settings: z.record(z.string(), z.unknown()),
  pg_version: z.number().int(),
  proxy_host: z.string(),
  branch_logical_size_limit: z.number().int(),
  branch_logical_size_limit_bytes: z.number().int(),
  store_passwords: z.boolean(),
  cpu_used_sec: z.number().int(),
  locked: z.boolean(),
  creation_source: z.string(),
  history_retention_seconds: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
  compute_last_active_at: Timestamp.optional(),
  owner_id: z.string(),
  org_id: z.string(),
};

export const ProjectListItem = z
  .object({ ...projectCommon, active_time: z.number().int(), org_name: z.string() })
  .openapi("ProjectListItem");

export const Project = z
  .object({
    ...projectCommon,
    data_storage_bytes_hour: z.number().int(),
    data_transfer_bytes: z.number().int(),
    written_data_bytes: z.number().int(),
    compute_time_seconds: z.number().int(),
    active_time_seconds: z.number().int(),
    consumption_period_start: Timestamp,
    consumption_period_end: Timestamp,
    owner: z.object({
      email: z.string(),
      name: z.string(),
      branches_limit: z.number().int(),
      subscription_type: z.string(),
    }),
  })
  .openapi("Project");

export const ProjectCreateRequest = z
  .object({
    project: z.object({
      name: z.string().max(256, "must be at most 256 characters").optional(),
      region_id: z.string().optional(),
      pg_version: PgVersion.optional(),
      provisioner: z.string().optional(),
      store_passwords: z.boolean().optional(),
      history_retention_seconds: HistoryRetention.optional(),
      autoscaling_limit_min_cu: ComputeUnit.optional(),
      autoscaling_limit_max_cu: ComputeUnit.optional(),
      default_endpoint_settings: DefaultEndpointSettings.optional(),
      settings: ProjectSettings.optional(),
      org_id: ResourceId.optional(),
      branch: z
        .object({
          name: z.string().min(1).max(256).optional(),
          role_name: PgName.optional(),
          database_name: PgName.optional(),
          annotations: StringMap.optional(),
        })
        .optional(),
    }),
  })
  .openapi("ProjectCreateRequest");

export const ProjectUpdateRequest = z
  .object({
    project: z.object({
      name: z.string().min(1).max(256, "must be at most 256 characters").optional(),
      settings: ProjectSettings.optional(),
      default_endpoint_settings: DefaultEndpointSettings.optional(),
      history_retention_seconds: HistoryRetention.optional(),
    }),
  })
  .openapi("ProjectUpdateRequest");

export const ConnectionDetails = z
  .object({
    connection_uri: z.string(),
    connection_parameters: z.object({
      database: z.string(),
      password: z.string(),
      role: z.string(),
      host: z.string(),
      pooler_host: z.string(),
    }),
  })
  .openapi("ConnectionDetails");

// Query helpers

/** Integer query parameter within [min, max], with a message naming the bounds. */
export function intQuery(min: number, max: number) {
  return z.coerce
    .number({ message: "must be an integer" })
    .int("must be an integer")
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`);
}

export const BoolQuery = z.enum(["true", "false"]).transform((v) => v === "true");
