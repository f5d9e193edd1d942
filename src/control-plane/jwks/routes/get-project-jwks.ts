import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { ProjectJWKSResponse } from "../schema.js";
import { listProjectJwks } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/jwks",
  operationId: "getProjectJWKS",
  tags: ["Project"],
  summary: "List the project's JWKS URLs",
  security,
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(ProjectJWKSResponse, "The JWKS URLs"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(listProjectJwks(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id), 200),
);
