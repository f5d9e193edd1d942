import { z } from "@hono/zod-openapi";
import { Branch } from "../branches/schema.js";
import { Operation } from "../operations/schema.js";
import { noNul, ResourceId, Timestamp } from "../schema.js";

export const Snapshot = z
  .object({
    id: z.string(),
    name: z.string(),
    lsn: z.string().optional(),
    timestamp: z.string().optional(),
    source_branch_id: z.string().optional(),
    created_at: z.string(),
    expires_at: z.string().optional(),
    manual: z.boolean().optional(),
    full_size: z.number().int().optional(),
  })
  .openapi("Snapshot");

const Name = z
  .string()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters")
  .refine(...noNul);

export const SnapshotCreateQuery = z.object({
  name: Name.optional(),
  lsn: z.string().optional(),
  timestamp: Timestamp.optional(),
  expires_at: Timestamp.optional(),
  slug: z.string().max(256).optional(),
});

export const SnapshotUpdateRequest = z
  .object({ snapshot: z.object({ name: Name.optional(), expires_at: Timestamp.nullable().optional() }) })
  .openapi("SnapshotUpdateRequest");

export const SnapshotRestoreRequest = z.object({
  name: Name.optional(),
  target_branch_id: ResourceId.optional(),
  finalize_restore: z.boolean().optional(),
});
export const SnapshotRestoreQuery = z.object({ name: Name.optional() });

export const FinalizeRestoreRequest = z.object({ name: Name.optional() });

export const BackupScheduleItem = z
  .object({
    frequency: z.enum(
      ["hourly", "daily", "weekly", "monthly", "yearly"],
      "must be hourly, daily, weekly, monthly or yearly",
    ),
    hour: z.number().int().min(0).max(23).optional(),
    day: z.number().int().min(1).max(31).optional(),
    month: z.number().int().min(1).max(12).optional(),
    retention_seconds: z.number().int().min(3600, "must be at least 3600").optional(),
  })
  .openapi("BackupScheduleItem");
export const BackupSchedule = z
  .object({ schedule: z.array(BackupScheduleItem).max(10, "at most 10 frequencies") })
  .openapi("BackupSchedule");

export const SnapshotParams = z.object({
  project_id: z.string().openapi({ param: { name: "project_id", in: "path" } }),
  snapshot_id: z.string().openapi({ param: { name: "snapshot_id", in: "path" } }),
});

export const RestoredSnapshot = z.object({
  branch: Branch,
  endpoints: z.array(z.unknown()).optional(),
  operations: z.array(Operation),
});

export type SnapshotCreateInput = z.infer<typeof SnapshotCreateQuery>;
export type SnapshotUpdateInput = z.infer<typeof SnapshotUpdateRequest>["snapshot"];
export type SnapshotRestoreInput = z.infer<typeof SnapshotRestoreRequest>;
export type BackupScheduleInput = z.infer<typeof BackupSchedule>;
