import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { EmptyResponse, SourceOrgParams, TransferProjectsToOrganizationRequest } from "../schema.js";
import { transferProjects } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/organizations/{source_org_id}/projects/transfer",
  operationId: "transferProjectsFromOrgToOrg",
  tags: ["Organizations"],
  summary: "Move projects, with all they hold, to another organization the caller is a member of",
  security,
  request: { params: SourceOrgParams, body: jsonBody(TransferProjectsToOrganizationRequest) },
  responses: { 200: jsonResponse(EmptyResponse, "Transferred"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { source_org_id } = c.req.valid("param");
  return c.json(
    transferProjects(c.var.ctx, c.var.principal.accountId, source_org_id, c.req.valid("json")),
    200,
  );
});
