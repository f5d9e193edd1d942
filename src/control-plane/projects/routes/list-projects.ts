import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Pagination } from "../../operations/schema.js";
import { ProjectListItem, ProjectListQuery } from "../schema.js";
import { listProjects } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects",
  operationId: "listProjects",
  tags: ["Project"],
  summary: "List the account's projects, oldest first, with cursor paging",
  security,
  request: { query: ProjectListQuery },
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
  c.json(listProjects(c.var.ctx, c.var.principal, c.req.valid("query")), 200),
);
