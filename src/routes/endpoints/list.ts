import { createRoute, z } from "@hono/zod-openapi";
import { listEndpointsJson } from "../../repos/endpoints.js";
import {
  createRouter,
  errorResponses,
  jsonResponse,
  ProjectParams,
  security,
  sendJsonText,
} from "../router.js";
import { Endpoint } from "../schemas.js";

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
