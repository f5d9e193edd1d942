import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { DatabaseOperations, DatabaseParams } from "../schema.js";
import { deleteDatabase } from "../service.js";

const route = createRoute({
  tags: ["Database"],
  security,
  method: "delete",
  path: `/projects/{project_id}/branches/{branch_id}/databases/{database_name}`,
  operationId: "deleteProjectBranchDatabase",
  summary: "Delete a database (apply_config)",
  request: { params: DatabaseParams },
  responses: { 200: jsonResponse(DatabaseOperations, "The deleted database"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(
      c,
      deleteDatabase(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.database_name),
    ),
    200,
  );
});
