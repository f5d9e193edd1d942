import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { EndpointParams } from "../../schema.js";
import { EndpointOperations } from "../schema.js";
import { deleteEndpoint } from "../service.js";

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
  return c.json(
    publish(c, deleteEndpoint(c.var.ctx, c.var.principal.accountId, p.project_id, p.endpoint_id)),
    200,
  );
});
