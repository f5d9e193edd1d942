import { createRoute } from "@hono/zod-openapi";
import { deleteEndpoint } from "../../repos/endpoints.js";
import { createRouter, EndpointParams, errorResponses, jsonResponse, security } from "../router.js";
import { EndpointOperations } from "../schemas.js";

const route = createRoute({
  method: "delete",
  path: "/projects/{project_id}/endpoints/{endpoint_id}",
  operationId: "deleteProjectEndpoint",
  tags: ["Endpoint"],
  summary: "Delete an endpoint: answers with the endpoint as it was and an empty operations array",
  security,
  request: { params: EndpointParams },
  responses: { 200: jsonResponse(EndpointOperations, "The deleted endpoint"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(deleteEndpoint(c.var.ctx, c.var.principal.accountId, p.project_id, p.endpoint_id), 200);
});
