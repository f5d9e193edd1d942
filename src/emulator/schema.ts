import { z } from "@hono/zod-openapi";
import { OPERATION_ACTIONS } from "../control-plane/operations/rules.js";

export const Clock = z.object({ mode: z.enum(["real", "manual"]), now: z.string() });

export const ClockAdvanceRequest = z.object({
  seconds: z
    .number({ message: "must be a number of seconds" })
    .positive("must be greater than 0")
    .max(366 * 86_400, "must be at most one year (31622400 seconds) per call"),
});

export const Fault = z.object({
  id: z.number().int(),
  action: z.string(),
  project_id: z.string().optional(),
  endpoint_id: z.string().optional(),
  remaining: z.number().int(),
  message: z.string(),
  created_at: z.string(),
});

export const FaultCreateRequest = z.object({
  action: z.enum(OPERATION_ACTIONS),
  count: z.number().int().min(1).max(10_000).optional(),
  project_id: z.string().optional(),
  endpoint_id: z.string().optional(),
  message: z.string().min(1).max(1000).optional(),
});

export const ResetRequest = z.object({ revoke_other_keys: z.boolean().optional() });

export const AccountCreateRequest = z.object({
  name: z.string().min(1).max(256).optional(),
  email: z.email().optional(),
  plan: z.enum(["paid", "free"]).optional(),
});

export type FaultInput = z.infer<typeof FaultCreateRequest>;
export type ResetInput = z.infer<typeof ResetRequest>;
export type AccountCreateInput = z.infer<typeof AccountCreateRequest>;
