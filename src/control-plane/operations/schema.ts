import { z } from "@hono/zod-openapi";
import { intQuery, ProjectParams, Timestamp } from "../schema.js";
import { OPERATION_ACTIONS, OPERATION_STATUSES } from "./rules.js";

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

export const Pagination = z.object({ cursor: z.string() }).openapi("Pagination");

export const OperationParams = ProjectParams.extend({
  operation_id: z.string().openapi({ param: { name: "operation_id", in: "path" } }),
});

export const OperationListQuery = z.object({
  limit: intQuery(1, 1000).optional(),
  cursor: z.string().min(1).optional(),
});
