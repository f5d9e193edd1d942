import { createRoute } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { RoleCreateRequest, RoleOperations } from "../schema.js";
import { createRole } from "../service.js";

const route = createRoute({
  tags: ["Role"],
  security,
  method: "post",
  path: "/projects/{project_id}/branches/{branch_id}/roles",
  operationId: "createProjectBranchRole",
  summary: "Create a role (apply_config); the response shows its password",
  request: { params: BranchParams, body: jsonBody(RoleCreateRequest) },
  responses: { 201: jsonResponse(RoleOperations, "The new role"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(
      c,
      createRole(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, c.req.valid("json").role),
    ),
    201,
  );
});
