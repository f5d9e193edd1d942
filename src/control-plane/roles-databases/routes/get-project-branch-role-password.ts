import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { RoleParams } from "../schema.js";
import { revealRolePassword } from "../service.js";

const route = createRoute({
  tags: ["Role"],
  security,
  method: "get",
  path: `/projects/{project_id}/branches/{branch_id}/roles/{role_name}/reveal_password`,
  operationId: "getProjectBranchRolePassword",
  summary: "Reveal a role's password",
  request: { params: RoleParams },
  responses: { 200: jsonResponse(z.object({ password: z.string() }), "The password"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    revealRolePassword(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.role_name),
    200,
  );
});
