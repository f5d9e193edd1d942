import { z } from "@hono/zod-openapi";
import { Timestamp } from "../schema.js";

const DbName = z.string().min(1, "db_name is required").max(63);
const PointInTime = { lsn: z.string().optional(), timestamp: Timestamp.optional() };

export const BranchSchemaQuery = z.object({
  db_name: DbName,
  ...PointInTime,
  format: z.enum(["sql", "json"], "must be sql or json").optional(),
});

export const BranchSchemaCompareQuery = z.object({
  base_branch_id: z
    .string()
    .regex(/^[a-z0-9-]{1,60}$/, "must be a branch id")
    .optional(),
  db_name: DbName,
  ...PointInTime,
  base_lsn: z.string().optional(),
  base_timestamp: Timestamp.optional(),
});

export const BranchSchemaResponse = z.object({ sql: z.string() }).openapi("BranchSchemaResponse");
export const BranchSchemaCompareResponse = z
  .object({ diff: z.string() })
  .openapi("BranchSchemaCompareResponse");

export type BranchSchemaInput = z.infer<typeof BranchSchemaQuery>;
export type BranchSchemaCompareInput = z.infer<typeof BranchSchemaCompareQuery>;
