import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { Database } from "../schema.js";
import { listDatabases } from "../service.js";

const route = createRoute({
  tags: ["Database"],
  security,
  method: "get",
  path: "/projects/{project_id}/branches/{branch_id}/databases",
  operationId: "listProjectBranchDatabases",
  summary: "List a branch's databases",
  request: { params: BranchParams },
  responses: {
    200: jsonResponse(z.object({ databases: z.array(Database) }), "The databases"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(listDatabases(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id), 200);
});
