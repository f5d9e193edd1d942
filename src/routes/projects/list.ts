import { createRoute, z } from "@hono/zod-openapi";
import { listProjects } from "../../repos/projects.js";
import { createRouter, errorResponses, jsonResponse, security } from "../router.js";
import { intQuery, Pagination, ProjectListItem, ResourceId } from "../schemas.js";

const Query = z.object({
  limit: intQuery(1, 400).optional(),
  cursor: z.string().min(1).optional(),
  search: z.string().max(256).optional(),
  org_id: ResourceId.optional(),
  timeout: z.string().optional(),
});

const route = createRoute({
  method: "get",
  path: "/projects",
  operationId: "listProjects",
  tags: ["Project"],
  summary: "List the account's projects, oldest first, with cursor paging",
  security,
  request: { query: Query },
  responses: {
    200: jsonResponse(
      z.object({
        projects: z.array(ProjectListItem),
        pagination: Pagination.optional(),
        applications: z.record(z.string(), z.unknown()),
        integrations: z.record(z.string(), z.unknown()),
      }),
      "A page of projects; `pagination.cursor` is present while more remain",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(listProjects(c.var.ctx, c.var.principal.accountId, c.req.valid("query")), 200),
);
