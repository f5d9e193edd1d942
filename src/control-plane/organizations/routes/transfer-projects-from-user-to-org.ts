import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { EmptyResponse, TransferProjectsToOrganizationRequest } from "../schema.js";
import { transferProjectsFromUser } from "../service.js";

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

export default createRouter().openapi(route, (c) =>
  c.json(transferProjectsFromUser(c.var.ctx, c.var.principal.accountId, c.req.valid("json")), 200),
);
