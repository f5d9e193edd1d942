import { createRoute } from "@hono/zod-openapi";
import { EndpointOperations } from "../../control-plane/endpoints/schema.js";
import { connectEndpoint } from "../../control-plane/endpoints/service.js";
import { EndpointParams } from "../../control-plane/schema.js";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../http/router.js";

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "post",
  path: "/projects/{project_id}/endpoints/{endpoint_id}/connect",
  summary: "Simulate a client connection: wakes an idle endpoint, refreshes last_active of an active one",
  request: { params: EndpointParams },
  responses: {
    200: jsonResponse(EndpointOperations, "The endpoint and any operation started"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(c, connectEndpoint(c.var.ctx, c.var.principal.accountId, p.project_id, p.endpoint_id)),
    200,
  );
});
