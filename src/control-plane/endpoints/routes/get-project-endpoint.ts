import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { EndpointParams } from "../../schema.js";
import { Endpoint } from "../schema.js";
import { getEndpoint } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/endpoints/{endpoint_id}",
  operationId: "getProjectEndpoint",
  tags: ["Endpoint"],
  summary: "Get an endpoint",
  security,
  request: { params: EndpointParams },
  responses: { 200: jsonResponse(z.object({ endpoint: Endpoint }), "The endpoint"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(getEndpoint(c.var.ctx, c.var.principal.accountId, p.project_id, p.endpoint_id), 200);
});
