import { z } from "@hono/zod-openapi";
import { Branch } from "../branches/schema.js";
import { Operation } from "../operations/schema.js";
import { noNul, ResourceId, Timestamp } from "../schema.js";

export const BranchRestoreRequest = z
  .object({
    source_branch_id: ResourceId,
    source_lsn: z.string().optional(),
    source_timestamp: Timestamp.optional(),
    // Empty: no branch keeps the previous state ("if not empty", Neon's OpenAPI says).
    preserve_under_name: z
      .string()
      .max(256, "must be at most 256 characters")
      .refine(...noNul)
      .optional(),
  })
  .openapi("BranchRestoreRequest");

export const BranchOperations = z
  .object({ branch: Branch, operations: z.array(Operation) })
  .openapi("BranchOperations");

export type BranchRestoreInput = z.infer<typeof BranchRestoreRequest>;
