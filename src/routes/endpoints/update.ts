import { createRoute } from "@hono/zod-openapi";
import { updateEndpoint } from "../../repos/endpoints.js";
import { createRouter, EndpointParams, errorResponses, jsonBody, jsonResponse, security } from "../router.js";
import { EndpointOperations, EndpointUpdateRequest } from "../schemas.js";

const route = createRoute({
  method: "patch",
  path: "/projects/{project_id}/endpoints/{endpoint_id}",
  operationId: "updateProjectEndpoint",
  tags: ["Endpoint"],
  summary: "Update an endpoint (branch_id reassigns; a compute size change restarts a running endpoint)",
  security,
  request: { params: EndpointParams, body: jsonBody(EndpointUpdateRequest) },
  responses: { 200: jsonResponse(EndpointOperations, "The endpoint and its operations"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    updateEndpoint(
      c.var.ctx,
      c.var.principal.accountId,
      p.project_id,
      p.endpoint_id,
      c.req.valid("json").endpoint,
    ),
    200,
  );
});
