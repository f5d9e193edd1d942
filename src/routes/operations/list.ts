import { createRoute, z } from "@hono/zod-openapi";
import { listOperations } from "../../repos/operations.js";
import {
  createRouter,
  errorResponses,
  jsonResponse,
  ProjectParams,
  security,
  sendJsonText,
} from "../router.js";
import { intQuery, Operation, Pagination } from "../schemas.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/operations",
  operationId: "listProjectOperations",
  tags: ["Operation"],
  summary: "List operations, newest first; pass pagination.cursor back as `cursor` for the next page",
  security,
  request: {
    params: ProjectParams,
    query: z.object({ limit: intQuery(1, 1000).optional(), cursor: z.string().min(1).optional() }),
  },
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
