import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { ProjectTransferRequestCreate, ProjectTransferRequestResponse } from "../schema.js";
import { createTransferRequest } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/transfer_requests",
  operationId: "createProjectTransferRequest",
  tags: ["Project"],
  summary: "Offer the project to whoever accepts the request before it expires (default 24 hours)",
  security,
  request: { params: ProjectParams, body: jsonBody(ProjectTransferRequestCreate) },
  responses: { 201: jsonResponse(ProjectTransferRequestResponse, "The transfer request"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { project_id } = c.req.valid("param");
  const { ttl_seconds } = c.req.valid("json");
  return c.json(createTransferRequest(c.var.ctx, c.var.principal.accountId, project_id, ttl_seconds), 201);
});
