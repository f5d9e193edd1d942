import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { BranchSchemaQuery, BranchSchemaResponse } from "../schema.js";
import { branchSchema } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/branches/{branch_id}/schema",
  operationId: "getProjectBranchSchema",
  tags: ["Branch"],
  summary:
    "The schema of one of the branch's databases at its head, as pg_dump --schema-only prints it (read from the branch's real database)",
  security,
  request: { params: BranchParams, query: BranchSchemaQuery },
  responses: { 200: jsonResponse(BranchSchemaResponse, "The schema"), ...errorResponses },
});

export default createRouter().openapi(route, async (c) => {
  const p = c.req.valid("param");
  const body = await branchSchema(
    c.var.ctx,
    c.var.principal.accountId,
    p.project_id,
    p.branch_id,
    c.req.valid("query"),
  );
  return c.json(body, 200);
});
