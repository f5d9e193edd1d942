import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { PermissionParams, ProjectPermission } from "../schema.js";
import { revokeProjectPermission } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/projects/{project_id}/permissions/{permission_id}",
  operationId: "revokePermissionFromProject",
  tags: ["Project"],
  summary: "Stop sharing the project with a user (at once)",
  security,
  request: { params: PermissionParams },
  responses: { 200: jsonResponse(ProjectPermission, "The revoked grant"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { project_id, permission_id } = c.req.valid("param");
  return c.json(
    revokeProjectPermission(c.var.ctx, c.var.principal.accountId, project_id, permission_id),
    200,
  );
});
