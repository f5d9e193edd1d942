import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { Operation } from "../../operations/schema.js";
import { BranchParams } from "../../schema.js";
import { Branch } from "../schema.js";
import { deleteBranch } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/projects/{project_id}/branches/{branch_id}",
  operationId: "deleteProjectBranch",
  tags: ["Branch"],
  summary:
    "Delete a branch with its endpoints, roles and databases (not the default branch, nor one with children)",
  security,
  request: { params: BranchParams },
  responses: {
    200: jsonResponse(z.object({ branch: Branch, operations: z.array(Operation) }), "The deleted branch"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(c, deleteBranch(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id)),
    200,
  );
});
