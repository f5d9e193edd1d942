import { createRoute, z } from "@hono/zod-openapi";
import { setDefaultBranch } from "../../repos/branches.js";
import { BranchParams, createRouter, errorResponses, jsonResponse, security } from "../router.js";
import { Branch, Operation } from "../schemas.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/branches/{branch_id}/set_as_default",
  operationId: "setDefaultProjectBranch",
  tags: ["Branch"],
  summary: "Make a branch the project's default branch",
  security,
  request: { params: BranchParams },
  responses: {
    200: jsonResponse(z.object({ branch: Branch, operations: z.array(Operation) }), "The new default branch"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(setDefaultBranch(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id), 200);
});
