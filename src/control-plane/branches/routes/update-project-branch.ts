import { createRoute, z } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { Operation } from "../../operations/schema.js";
import { BranchParams } from "../../schema.js";
import { Branch, BranchUpdateRequest } from "../schema.js";
import { updateBranch } from "../service.js";

const route = createRoute({
  method: "patch",
  path: "/projects/{project_id}/branches/{branch_id}",
  operationId: "updateProjectBranch",
  tags: ["Branch"],
  summary: "Rename a branch or change its protection",
  security,
  request: { params: BranchParams, body: jsonBody(BranchUpdateRequest) },
  responses: {
    200: jsonResponse(z.object({ branch: Branch, operations: z.array(Operation) }), "The updated branch"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(
      c,
      updateBranch(
        c.var.ctx,
        c.var.principal.accountId,
        p.project_id,
        p.branch_id,
        c.req.valid("json").branch,
      ),
    ),
    200,
  );
});
