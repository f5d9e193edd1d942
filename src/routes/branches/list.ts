import { createRoute, z } from "@hono/zod-openapi";
import { listBranches } from "../../repos/branches.js";
import { createRouter, errorResponses, jsonResponse, ProjectParams, security } from "../router.js";
import { Annotation, Branch, intQuery } from "../schemas.js";

const Query = z.object({
  search: z.string().max(256).optional(),
  sort_by: z.enum(["name", "created_at", "updated_at"]).optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
  limit: intQuery(1, 10_000).optional(),
  cursor: z.string().min(1).optional(),
  include_deleted: z.string().optional(),
});

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/branches",
  operationId: "listProjectBranches",
  tags: ["Branch"],
  summary: "List branches; `pagination.next` is present only while more remain",
  security,
  request: { params: ProjectParams, query: Query },
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
