import { createRoute } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { DatabaseCreateRequest, DatabaseOperations } from "../schema.js";
import { createDatabase } from "../service.js";

const route = createRoute({
  tags: ["Database"],
  security,
  method: "post",
  path: "/projects/{project_id}/branches/{branch_id}/databases",
  operationId: "createProjectBranchDatabase",
  summary: "Create a database owned by an existing role (apply_config)",
  request: { params: BranchParams, body: jsonBody(DatabaseCreateRequest) },
  responses: { 201: jsonResponse(DatabaseOperations, "The new database"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(
      c,
      createDatabase(
        c.var.ctx,
        c.var.principal.accountId,
        p.project_id,
        p.branch_id,
        c.req.valid("json").database,
      ),
    ),
    201,
  );
});
