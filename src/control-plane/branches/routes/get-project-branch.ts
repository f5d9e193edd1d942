import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { Annotation, Branch } from "../schema.js";
import { getBranch } from "../service.js";
import { branchCount } from "./count-project-branches.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/branches/{branch_id}",
  operationId: "getProjectBranch",
  tags: ["Branch"],
  summary: "Get a branch",
  security,
  middleware: [branchCount],
  request: { params: BranchParams },
  responses: {
    200: jsonResponse(z.object({ branch: Branch, annotation: Annotation }), "The branch"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(getBranch(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id), 200);
});
