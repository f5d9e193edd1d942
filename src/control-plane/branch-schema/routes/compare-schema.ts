import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { BranchSchemaCompareQuery, BranchSchemaCompareResponse } from "../schema.js";
import { compareBranchSchema } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/branches/{branch_id}/compare_schema",
  operationId: "getProjectBranchSchemaComparison",
  tags: ["Branch"],
  summary:
    "The unified diff from the base branch's schema (its parent unless base_branch_id says otherwise) to this branch's, for one database",
  security,
  request: { params: BranchParams, query: BranchSchemaCompareQuery },
  responses: { 200: jsonResponse(BranchSchemaCompareResponse, "The difference"), ...errorResponses },
});

export default createRouter().openapi(route, async (c) => {
  const p = c.req.valid("param");
  const body = await compareBranchSchema(
    c.var.ctx,
    c.var.principal.accountId,
    p.project_id,
    p.branch_id,
    c.req.valid("query"),
  );
  return c.json(body, 200);
});
