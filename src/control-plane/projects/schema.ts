import { z } from "@hono/zod-openapi";
import { ComputeUnit, PgSettings, SuspendTimeoutSeconds } from "../endpoints/schema.js";
import {
  BoolQuery,
  BoundedStringMap,
  BranchName,
  DatabaseName,
  intQuery,
  noNul,
  ResourceId,
  RoleName,
  settingsWithinSize,
  Timestamp,
} from "../schema.js";
import { ipPatternProblem } from "./ip-allow.js";
import { PRELOAD_LIBRARIES } from "./preload-libraries.js";
import { QUOTA_NAMES } from "./quota.js";

export const PgVersion = z
  .number()
  .int()
  .min(14, "must be 14 to 18")
  .max(18, "must be 14 to 18")
  .openapi("PgVersion");

export const DefaultEndpointSettings = z
  .object({
    pg_settings: PgSettings.optional(),
    pgbouncer_settings: BoundedStringMap.optional(),
    autoscaling_limit_min_cu: ComputeUnit.optional(),
    autoscaling_limit_max_cu: ComputeUnit.optional(),
    suspend_timeout_seconds: SuspendTimeoutSeconds.optional(),
  })
  .openapi("DefaultEndpointSettings");

const PreloadLibraries = z.object({
  use_defaults: z.boolean().optional(),
  enabled_libraries: z
    .array(
      z.enum(
        PRELOAD_LIBRARIES.map((l) => l.library_name),
        "must be a library GET /projects/{project_id}/available_preload_libraries lists",
      ),
    )
    .max(20)
    .optional(),
});
/** The IP allow list: entries as Neon's proxy reads them (ip-allow.ts). */
const AllowedIps = z.object({
  ips: z
    .array(
      z
        .string()
        .max(100)
        .superRefine((ip, ctx) => {
          const problem = ipPatternProblem(ip);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        }),
    )
    .max(1000)
    .optional(),
  protected_branches_only: z.boolean().optional(),
});
/** ProjectQuota: each a non-negative int64 (0 is unlimited). */
const ProjectQuota = z.object(
  Object.fromEntries(
    // int() bounds it to safe integers (within int64).
    QUOTA_NAMES.map((name) => [name, z.number().int().min(0).optional()]),
  ),
);
const ProjectSettings = z
  .record(z.string(), z.unknown())
  .superRefine((settings, ctx) => {
    settingsWithinSize(settings, ctx);
    const logical = settings.enable_logical_replication;
    if (logical !== undefined && typeof logical !== "boolean")
      ctx.addIssue({ code: "custom", path: ["enable_logical_replication"], message: "must be a boolean" });
    for (const name of ["block_public_connections", "block_vpc_connections"])
      if (settings[name] !== undefined && typeof settings[name] !== "boolean")
        ctx.addIssue({ code: "custom", path: [name], message: "must be a boolean" });
    if (settings.quota !== undefined) {
      const parsed = ProjectQuota.safeParse(settings.quota);
      for (const issue of parsed.error?.issues ?? [])
        ctx.addIssue({ code: "custom", path: ["quota", ...issue.path], message: issue.message });
    }
    if (settings.allowed_ips !== undefined) {
      const parsed = AllowedIps.safeParse(settings.allowed_ips);
      for (const issue of parsed.error?.issues ?? [])
        ctx.addIssue({ code: "custom", path: ["allowed_ips", ...issue.path], message: issue.message });
    }
    if (settings.preload_libraries === undefined) return;
    const parsed = PreloadLibraries.safeParse(settings.preload_libraries);
    for (const issue of parsed.error?.issues ?? [])
      ctx.addIssue({ code: "custom", path: ["preload_libraries", ...issue.path], message: issue.message });
  })
  .openapi("ProjectSettingsData");
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
  .object({
    ...projectCommon,
    active_time: z.number().int(),
    org_name: z.string(),
    deleted_at: Timestamp.optional(),
    recoverable_until: Timestamp.optional(),
  })
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
      name: z
        .string()
        .min(1)
        .max(256, "must be at most 256 characters")
        .refine(...noNul)
        .optional(),
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
          name: BranchName.optional(),
          role_name: RoleName.optional(),
          database_name: DatabaseName.optional(),
          annotations: BoundedStringMap.optional(),
        })
        .optional(),
    }),
  })
  .openapi("ProjectCreateRequest");

export const ProjectUpdateRequest = z
  .object({
    project: z.object({
      name: z
        .string()
        .min(1)
        .max(256, "must be at most 256 characters")
        .refine(...noNul)
        .optional(),
      settings: ProjectSettings.optional(),
      default_endpoint_settings: DefaultEndpointSettings.optional(),
      history_retention_seconds: HistoryRetention.optional(),
    }),
  })
  .openapi("ProjectUpdateRequest");

export const ProjectListQuery = z.object({
  limit: intQuery(1, 400).optional(),
  cursor: z.string().min(1).optional(),
  search: z.string().max(256).optional(),
  org_id: ResourceId.optional(),
  timeout: z.string().optional(),
  recoverable: BoolQuery.optional().openapi({
    description: "Only deleted projects still within their recovery window",
  }),
});

export const SharedProjectListQuery = z.object({
  limit: intQuery(1, 400).optional(),
  cursor: z.string().optional(),
  search: z.string().max(256).optional(),
  timeout: z.string().optional(),
});

export type DefaultEndpointSettingsInput = z.infer<typeof DefaultEndpointSettings>;
export type ProjectCreateInput = z.infer<typeof ProjectCreateRequest>["project"];
export type ProjectUpdateInput = z.infer<typeof ProjectUpdateRequest>["project"];
export type ProjectListInput = z.infer<typeof ProjectListQuery>;
