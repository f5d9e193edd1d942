import { z } from "@hono/zod-openapi";

/** An organization as the public API shows it (each emulated account has one). */
export const Organization = z
  .object({
    id: z.string(),
    name: z.string(),
    handle: z.string(),
    plan: z.string(),
    created_at: z.string(),
    managed_by: z.string(),
    updated_at: z.string(),
  })
  .openapi("Organization");
