import { createRoute, z } from "@hono/zod-openapi";
import { getConnectionUri } from "../../repos/connection.js";
import { createRouter, errorResponses, jsonResponse, ProjectParams, security } from "../router.js";
import { BoolQuery } from "../schemas.js";

const Query = z.object({
  branch_id: z.string().optional(),
  endpoint_id: z.string().optional(),
  database_name: z.string().min(1, "is required"),
  role_name: z.string().min(1, "is required"),
  pooled: BoolQuery.optional(),
});

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/connection_uri",
  operationId: "getConnectionURI",
  tags: ["Project"],
  summary: "Build a postgresql:// connection URI (pooled: host gets -pooler after the endpoint id)",
  security,
  request: { params: ProjectParams, query: Query },
  responses: { 200: jsonResponse(z.object({ uri: z.string() }), "The connection URI"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(
    getConnectionUri(
      c.var.ctx,
      c.var.principal.accountId,
      c.req.valid("param").project_id,
      c.req.valid("query"),
    ),
    200,
  ),
);
