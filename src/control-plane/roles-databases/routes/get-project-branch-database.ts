import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Database, DatabaseParams } from "../schema.js";
import { getDatabase } from "../service.js";

const route = createRoute({
  tags: ["Database"],
  security,
  method: "get",
  path: `/projects/{project_id}/branches/{branch_id}/databases/{database_name}`,
  operationId: "getProjectBranchDatabase",
  summary: "Get a database",
  request: { params: DatabaseParams },
  responses: { 200: jsonResponse(z.object({ database: Database }), "The database"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    getDatabase(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.database_name),
    200,
  );
});
