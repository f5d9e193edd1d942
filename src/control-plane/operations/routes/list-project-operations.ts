import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security, sendJsonText } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { Operation, OperationListQuery, Pagination } from "../schema.js";
import { listOperations } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/operations",
  operationId: "listProjectOperations",
  tags: ["Operation"],
  summary: "List operations, newest first; pass pagination.cursor back as `cursor` for the next page",
  security,
  request: { params: ProjectParams, query: OperationListQuery },
  responses: {
    200: jsonResponse(
      z.object({ operations: z.array(Operation), pagination: Pagination.optional() }),
      "A page of operations",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  sendJsonText(
    c,
    listOperations(
      c.var.ctx,
      c.var.principal.accountId,
      c.req.valid("param").project_id,
      c.req.valid("query"),
    ),
    200,
  ),
);
