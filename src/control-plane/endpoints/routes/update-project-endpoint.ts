import { createRoute } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { EndpointParams } from "../../schema.js";
import { EndpointOperations, EndpointUpdateRequest } from "../schema.js";
import { updateEndpoint } from "../service.js";

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
    publish(
      c,
      updateEndpoint(
        c.var.ctx,
        c.var.principal.accountId,
        p.project_id,
        p.endpoint_id,
        c.req.valid("json").endpoint,
      ),
    ),
    200,
  );
});
