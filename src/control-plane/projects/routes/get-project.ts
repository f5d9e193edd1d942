import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { Project } from "../schema.js";
import { getProject } from "../service.js";
import { sharedProjects } from "./list-shared-projects.js";

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
