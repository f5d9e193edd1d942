import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { RoleOperations, RoleParams } from "../schema.js";
import { resetRolePassword } from "../service.js";

const route = createRoute({
  tags: ["Role"],
  security,
  method: "post",
  path: `/projects/{project_id}/branches/{branch_id}/roles/{role_name}/reset_password`,
  operationId: "resetProjectBranchRolePassword",
  summary: "Reset a role's password (apply_config)",
  request: { params: RoleParams },
  responses: { 200: jsonResponse(RoleOperations, "The role with its new password"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(
      c,
      resetRolePassword(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.role_name),
    ),
    200,
  );
});
