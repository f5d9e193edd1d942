import { z } from "@hono/zod-openapi";
import { BranchCreateRequestEndpointOptions } from "../endpoints/schema.js";
import { BoundedStringMap, BranchName, intQuery, ResourceId, StringMap, Timestamp } from "../schema.js";

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
    last_reset_at: Timestamp.optional(),
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
        name: BranchName.optional(),
        parent_lsn: z.string().optional(),
        parent_timestamp: z.iso.datetime({ offset: true }).optional(),
        protected: z.boolean().optional(),
        init_source: z.enum(["parent-data", "schema-only"]).optional(),
        expires_at: z.iso.datetime({ offset: true }).optional(),
      })
      .optional(),
    endpoints: z.array(BranchCreateRequestEndpointOptions).max(10).optional(),
    annotation_value: BoundedStringMap.optional(),
  })
  .openapi("BranchCreateRequest");

export const BranchUpdateRequest = z
  .object({
    branch: z.object({
      name: BranchName.optional(),
      protected: z.boolean().optional(),
      expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
    }),
  })
  .openapi("BranchUpdateRequest");

export const BranchListQuery = z.object({
  search: z.string().max(256).optional(),
  sort_by: z.enum(["name", "created_at", "updated_at"]).optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
  limit: intQuery(1, 10_000).optional(),
  cursor: z.string().min(1).optional(),
  include_deleted: z.string().optional(),
});

export type BranchCreateInput = z.infer<typeof BranchCreateRequest>;
export type BranchUpdateInput = z.infer<typeof BranchUpdateRequest>["branch"];
export type BranchListInput = z.infer<typeof BranchListQuery>;
