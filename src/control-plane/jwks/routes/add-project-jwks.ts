import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { Operation } from "../../operations/schema.js";
import { ProjectParams } from "../../schema.js";
import { AddProjectJWKSRequest, JWKS } from "../schema.js";
import { addProjectJwks } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/jwks",
  operationId: "addProjectJWKS",
  tags: ["Project"],
  summary: "Add a JWKS URL (HTTPS) to the project, for all branches or one",
  security,
  request: { params: ProjectParams, body: jsonBody(AddProjectJWKSRequest) },
  responses: {
    201: jsonResponse(z.object({ jwks: JWKS, operations: z.array(Operation) }), "The JWKS URL added"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const { project_id } = c.req.valid("param");
  return c.json(addProjectJwks(c.var.ctx, c.var.principal.accountId, project_id, c.req.valid("json")), 201);
});
