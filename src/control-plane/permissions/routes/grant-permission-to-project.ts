import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { GrantPermissionToProjectRequest, ProjectPermission } from "../schema.js";
import { grantProjectPermission } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/permissions",
  operationId: "grantPermissionToProject",
  tags: ["Project"],
  summary: "Share the project with a user by email (a collaborator: everything but deleting it)",
  security,
  request: { params: ProjectParams, body: jsonBody(GrantPermissionToProjectRequest) },
  responses: { 200: jsonResponse(ProjectPermission, "The grant"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { project_id } = c.req.valid("param");
  return c.json(
    grantProjectPermission(c.var.ctx, c.var.principal.accountId, project_id, c.req.valid("json").email),
    200,
  );
});
