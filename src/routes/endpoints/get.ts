import { createRoute, z } from "@hono/zod-openapi";
import { getEndpoint } from "../../repos/endpoints.js";
import { createRouter, EndpointParams, errorResponses, jsonResponse, security } from "../router.js";
import { Endpoint } from "../schemas.js";

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
