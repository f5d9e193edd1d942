import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { Operation } from "../../operations/schema.js";
import { BranchParams } from "../../schema.js";
import { Branch } from "../schema.js";
import { setDefaultBranch } from "../service.js";

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
  return c.json(
    publish(c, setDefaultBranch(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id)),
    200,
  );
});
