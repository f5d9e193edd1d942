import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security, sendJsonText } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { Endpoint } from "../schema.js";
import { listEndpointsJson } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/endpoints",
  operationId: "listProjectEndpoints",
  tags: ["Endpoint"],
  summary: "List a project's endpoints (without pending_state)",
  security,
  request: { params: ProjectParams },
  responses: {
    200: jsonResponse(z.object({ endpoints: z.array(Endpoint) }), "The endpoints"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  sendJsonText(
    c,
    listEndpointsJson(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id, c.req.raw),
    200,
  ),
);
