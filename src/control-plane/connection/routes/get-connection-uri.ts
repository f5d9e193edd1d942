import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { ConnectionUriQuery } from "../schema.js";
import { getConnectionUri } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/connection_uri",
  operationId: "getConnectionURI",
  tags: ["Project"],
  summary: "Build a postgresql:// connection URI (pooled: host gets -pooler after the endpoint id)",
  security,
  request: { params: ProjectParams, query: ConnectionUriQuery },
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
