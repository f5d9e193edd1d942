import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { JWKS, JwksParams } from "../schema.js";
import { deleteProjectJwks } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/projects/{project_id}/jwks/{jwks_id}",
  operationId: "deleteProjectJWKS",
  tags: ["Project"],
  summary: "Remove a JWKS URL from the project",
  security,
  request: { params: JwksParams },
  responses: { 200: jsonResponse(JWKS, "The removed JWKS URL"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { project_id, jwks_id } = c.req.valid("param");
  return c.json(deleteProjectJwks(c.var.ctx, c.var.principal.accountId, project_id, jwks_id), 200);
});
