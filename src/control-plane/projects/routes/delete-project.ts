import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { Project } from "../schema.js";
import { deleteProject } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/projects/{project_id}",
  operationId: "deleteProject",
  tags: ["Project"],
  summary: "Delete a project and everything in it (stored data goes through delete_tenant)",
  security,
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(z.object({ project: Project }), "The deleted project"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(
    publish(c, deleteProject(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id)),
    200,
  ),
);
