import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { RoleOperations, RoleParams } from "../schema.js";
import { deleteRole } from "../service.js";

const route = createRoute({
  tags: ["Role"],
  security,
  method: "delete",
  path: `/projects/{project_id}/branches/{branch_id}/roles/{role_name}`,
  operationId: "deleteProjectBranchRole",
  summary: "Delete a role (apply_config); refused while it owns a database",
  request: { params: RoleParams },
  responses: { 200: jsonResponse(RoleOperations, "The deleted role"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(c, deleteRole(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.role_name)),
    200,
  );
});
