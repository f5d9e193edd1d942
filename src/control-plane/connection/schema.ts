import { z } from "@hono/zod-openapi";
import { BoolQuery } from "../schema.js";

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

export const ConnectionUriQuery = z.object({
  branch_id: z.string().optional(),
  endpoint_id: z.string().optional(),
  database_name: z.string().min(1, "is required"),
  role_name: z.string().min(1, "is required"),
  pooled: BoolQuery.optional(),
});

export type ConnectionUriInput = z.infer<typeof ConnectionUriQuery>;
