import { createRoute, z } from "@hono/zod-openapi";
import { getProject } from "../../repos/projects.js";
import { createRouter, errorResponses, jsonResponse, ProjectParams, security } from "../router.js";
import { Project } from "../schemas.js";
import { sharedProjects } from "./list-shared.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}",
  operationId: "getProject",
  tags: ["Project"],
  summary: "Get a project",
  security,
  middleware: [sharedProjects],
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(z.object({ project: Project }), "The project"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(getProject(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id), 200),
);
