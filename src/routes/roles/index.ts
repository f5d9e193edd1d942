import { createRoute, z } from "@hono/zod-openapi";
import {
  createRole,
  deleteRole,
  getRole,
  listRoles,
  resetRolePassword,
  revealRolePassword,
} from "../../repos/roles-databases.js";
import {
  BranchParams,
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  RoleParams,
  security,
} from "../router.js";
import { Operation, Role, RoleCreateRequest } from "../schemas.js";

const base = "/projects/{project_id}/branches/{branch_id}/roles";
const RoleOperations = z.object({ role: Role, operations: z.array(Operation) });
const common = { tags: ["Role"], security };

const list = createRoute({
  ...common,
  method: "get",
  path: base,
  operationId: "listProjectBranchRoles",
  summary: "List a branch's roles",
  request: { params: BranchParams },
  responses: { 200: jsonResponse(z.object({ roles: z.array(Role) }), "The roles"), ...errorResponses },
});

const create = createRoute({
  ...common,
  method: "post",
  path: base,
  operationId: "createProjectBranchRole",
  summary: "Create a role (apply_config); the response shows its password",
  request: { params: BranchParams, body: jsonBody(RoleCreateRequest) },
  responses: { 201: jsonResponse(RoleOperations, "The new role"), ...errorResponses },
});

const get = createRoute({
  ...common,
  method: "get",
  path: `${base}/{role_name}`,
  operationId: "getProjectBranchRole",
  summary: "Get a role",
  request: { params: RoleParams },
  responses: { 200: jsonResponse(z.object({ role: Role }), "The role"), ...errorResponses },
});

const del = createRoute({
  ...common,
  method: "delete",
  path: `${base}/{role_name}`,
  operationId: "deleteProjectBranchRole",
  summary: "Delete a role (apply_config); refused while it owns a database",
  request: { params: RoleParams },
  responses: { 200: jsonResponse(RoleOperations, "The deleted role"), ...errorResponses },
});

const reveal = createRoute({
  ...common,
  method: "get",
  path: `${base}/{role_name}/reveal_password`,
  operationId: "getProjectBranchRolePassword",
  summary: "Reveal a role's password",
  request: { params: RoleParams },
  responses: { 200: jsonResponse(z.object({ password: z.string() }), "The password"), ...errorResponses },
});

const reset = createRoute({
  ...common,
  method: "post",
  path: `${base}/{role_name}/reset_password`,
  operationId: "resetProjectBranchRolePassword",
  summary: "Reset a role's password (apply_config)",
  request: { params: RoleParams },
  responses: { 200: jsonResponse(RoleOperations, "The role with its new password"), ...errorResponses },
});

export default createRouter()
  .openapi(list, (c) => {
    const p = c.req.valid("param");
    return c.json(listRoles(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id), 200);
  })
  .openapi(create, (c) => {
    const p = c.req.valid("param");
    return c.json(
      createRole(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, c.req.valid("json").role),
      201,
    );
  })
  .openapi(get, (c) => {
    const p = c.req.valid("param");
    return c.json(getRole(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.role_name), 200);
  })
  .openapi(del, (c) => {
    const p = c.req.valid("param");
    return c.json(
      deleteRole(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.role_name),
      200,
    );
  })
  .openapi(reveal, (c) => {
    const p = c.req.valid("param");
    return c.json(
      revealRolePassword(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.role_name),
      200,
    );
  })
  .openapi(reset, (c) => {
    const p = c.req.valid("param");
    return c.json(
      resetRolePassword(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.role_name),
      200,
    );
  });
