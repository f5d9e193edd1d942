import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { ProjectPermissions } from "../schema.js";
import { listProjectPermissions } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/permissions",
  operationId: "listProjectPermissions",
  tags: ["Project"],
  summary: "List who the project is shared with",
  security,
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(ProjectPermissions, "The active grants"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(listProjectPermissions(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id), 200),
);
