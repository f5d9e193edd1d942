import { createRoute, z } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { Operation } from "../../operations/schema.js";
import { ProjectParams } from "../../schema.js";
import { Project, ProjectUpdateRequest } from "../schema.js";
import { updateProject } from "../service.js";

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
    publish(
      c,
      updateProject(
        c.var.ctx,
        c.var.principal.accountId,
        c.req.valid("param").project_id,
        c.req.valid("json").project,
      ),
    ),
    200,
  ),
);
