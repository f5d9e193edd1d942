import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Role, RoleParams } from "../schema.js";
import { getRole } from "../service.js";

const route = createRoute({
  tags: ["Role"],
  security,
  method: "get",
  path: `/projects/{project_id}/branches/{branch_id}/roles/{role_name}`,
  operationId: "getProjectBranchRole",
  summary: "Get a role",
  request: { params: RoleParams },
  responses: { 200: jsonResponse(z.object({ role: Role }), "The role"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(getRole(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.role_name), 200);
});
