import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { EmptyResponse, TransferProjectsToOrganizationRequest } from "../schema.js";
import { ownOrgId, transferProjects } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/users/me/projects/transfer",
  operationId: "transferProjectsFromUserToOrg",
  tags: ["Users"],
  summary:
    "Move the caller's projects to another organization (deprecated on Neon: the personal account is the caller's own organization)",
  security,
  request: { body: jsonBody(TransferProjectsToOrganizationRequest) },
  responses: { 200: jsonResponse(EmptyResponse, "Transferred"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { accountId } = c.var.principal;
  return c.json(
    transferProjects(c.var.ctx, accountId, ownOrgId(c.var.ctx, accountId), c.req.valid("json")),
    200,
  );
});
