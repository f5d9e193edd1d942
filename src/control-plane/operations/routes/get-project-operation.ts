import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Operation, OperationParams } from "../schema.js";
import { getOperation } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/operations/{operation_id}",
  operationId: "getProjectOperation",
  tags: ["Operation"],
  summary: "Get one operation (poll it until status is finished or failed)",
  security,
  request: { params: OperationParams },
  responses: { 200: jsonResponse(z.object({ operation: Operation }), "The operation"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(getOperation(c.var.ctx, c.var.principal.accountId, p.project_id, p.operation_id), 200);
});
