import { createRoute, z } from "@hono/zod-openapi";
import { getOperation } from "../../repos/operations.js";
import { createRouter, errorResponses, jsonResponse, ProjectParams, security } from "../router.js";
import { Operation } from "../schemas.js";

const Params = ProjectParams.extend({
  operation_id: z.string().openapi({ param: { name: "operation_id", in: "path" } }),
});

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/operations/{operation_id}",
  operationId: "getProjectOperation",
  tags: ["Operation"],
  summary: "Get one operation (poll it until status is finished or failed)",
  security,
  request: { params: Params },
  responses: { 200: jsonResponse(z.object({ operation: Operation }), "The operation"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(getOperation(c.var.ctx, c.var.principal.accountId, p.project_id, p.operation_id), 200);
});
