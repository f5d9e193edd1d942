import { createRoute, z } from "@hono/zod-openapi";
import { updateProject } from "../../repos/projects.js";
import { createRouter, errorResponses, jsonBody, jsonResponse, ProjectParams, security } from "../router.js";
import { Operation, Project, ProjectUpdateRequest } from "../schemas.js";

const route = createRoute({
  method: "patch",
  path: "/projects/{project_id}",
  operationId: "updateProject",
  tags: ["Project"],
  summary: "Update a project (a change of history_retention_seconds starts apply_storage_config)",
  security,
  request: { params: ProjectParams, body: jsonBody(ProjectUpdateRequest) },
  responses: {
    200: jsonResponse(z.object({ project: Project, operations: z.array(Operation) }), "The updated project"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(
    updateProject(
      c.var.ctx,
      c.var.principal.accountId,
      c.req.valid("param").project_id,
      c.req.valid("json").project,
    ),
    200,
  ),
);
