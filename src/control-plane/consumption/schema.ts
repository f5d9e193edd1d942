import { z } from "@hono/zod-openapi";
import { intQuery, ResourceId, Timestamp } from "../schema.js";

const List = z.union([z.string().max(6200), z.array(z.string().max(6200)).max(100)]);

const common = {
  from: z.string().max(64).openapi({ format: "date-time" }),
  to: z.string().max(64).openapi({ format: "date-time" }),
  granularity: z.enum(["hourly", "daily", "monthly"]),
  cursor: z.string().max(200).optional(),
};

export const HistoryV1Query = z.object({
  ...common,
  limit: intQuery(1, 100).optional(),
  project_ids: List.optional(),
  org_id: ResourceId.optional(),
  include_v1_metrics: z.enum(["true", "false"]).optional(),
  metrics: List.optional(),
});
export const HistoryV2Query = z.object({
  ...common,
  limit: intQuery(1, 100).optional(),
  project_ids: List.optional(),
  org_id: ResourceId,
  metrics: List,
});
export const BranchHistoryQuery = z.object({
  ...common,
  limit: intQuery(1, 1000).optional(),
  project_ids: List,
  branch_ids: List.optional(),
  org_id: ResourceId,
  metrics: List,
});

const period = <T extends z.ZodType>(timeframe: T) =>
  z.object({
    period_id: z.string(),
    period_plan: z.string(),
    period_start: Timestamp,
    period_end: Timestamp.optional(),
    consumption: z.array(timeframe),
  });
const frame = { timeframe_start: Timestamp, timeframe_end: Timestamp };
const Pagination = z.object({ cursor: z.string() });

export const HistoryV1Response = z.object({
  projects: z.array(
    z.object({
      project_id: z.string(),
      periods: z.array(
        period(
          z.object({
            ...frame,
            active_time_seconds: z.number().int(),
            compute_time_seconds: z.number().int(),
            written_data_bytes: z.number().int(),
            synthetic_storage_size_bytes: z.number().int(),
          }),
        ),
      ),
    }),
  ),
  pagination: Pagination.optional(),
});
const MetricFrame = z.object({
  ...frame,
  metrics: z.array(z.object({ metric_name: z.string(), value: z.number().int() })),
});
export const HistoryV2Response = z.object({
  projects: z.array(z.object({ project_id: z.string(), periods: z.array(period(MetricFrame)) })),
  pagination: Pagination.optional(),
});
export const BranchHistoryResponse = z.object({
  branches: z.array(
    z.object({ project_id: z.string(), branch_id: z.string(), periods: z.array(period(MetricFrame)) }),
  ),
  pagination: Pagination.optional(),
});
