import { createRoute } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { DatabaseOperations, DatabaseParams, DatabaseUpdateRequest } from "../schema.js";
import { updateDatabase } from "../service.js";

const route = createRoute({
  tags: ["Database"],
  security,
  method: "patch",
  path: `/projects/{project_id}/branches/{branch_id}/databases/{database_name}`,
  operationId: "updateProjectBranchDatabase",
  summary: "Rename a database or change its owner (apply_config)",
  request: { params: DatabaseParams, body: jsonBody(DatabaseUpdateRequest) },
  responses: { 200: jsonResponse(DatabaseOperations, "The updated database"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(
      c,
      updateDatabase(
        c.var.ctx,
        c.var.principal.accountId,
        p.project_id,
        p.branch_id,
        p.database_name,
        c.req.valid("json").database,
      ),
    ),
    200,
  );
});
