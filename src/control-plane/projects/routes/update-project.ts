import { createRoute, z } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { projectMajor, requireSettingsTaken } from "../../endpoints/service.js";
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

export default createRouter().openapi(route, async (c) => {
  const { ctx, principal } = c.var;
  const projectId = c.req.valid("param").project_id;
  const input = c.req.valid("json").project;
  await requireSettingsTaken(ctx, projectMajor(ctx, principal.accountId, projectId), [
    input.default_endpoint_settings?.pg_settings,
  ]);
  return c.json(publish(c, updateProject(ctx, principal.accountId, projectId, input)), 200);
});
