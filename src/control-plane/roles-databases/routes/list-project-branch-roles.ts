import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { Role } from "../schema.js";
import { listRoles } from "../service.js";

const route = createRoute({
  tags: ["Role"],
  security,
  method: "get",
  path: "/projects/{project_id}/branches/{branch_id}/roles",
  operationId: "listProjectBranchRoles",
  summary: "List a branch's roles",
  request: { params: BranchParams },
  responses: { 200: jsonResponse(z.object({ roles: z.array(Role) }), "The roles"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(listRoles(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id), 200);
});
