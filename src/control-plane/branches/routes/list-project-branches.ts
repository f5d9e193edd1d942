import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { Annotation, Branch, BranchListQuery } from "../schema.js";
import { listBranches } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/branches",
  operationId: "listProjectBranches",
  tags: ["Branch"],
  summary: "List branches; `pagination.next` is present only while more remain",
  security,
  request: { params: ProjectParams, query: BranchListQuery },
  responses: {
    200: jsonResponse(
      z.object({
        branches: z.array(Branch),
        annotations: z.record(z.string(), Annotation),
        pagination: z.object({ next: z.string().optional(), sort_by: z.string(), sort_order: z.string() }),
      }),
      "A page of branches",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(
    listBranches(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id, c.req.valid("query")),
    200,
  ),
);
