import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { OrganizationInvitationsResponse } from "../schema.js";
import { listOrgInvitations } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/organizations/{org_id}/invitations",
  operationId: "getOrganizationInvitations",
  tags: ["Organizations"],
  summary: "List the organization's invitations, pending and accepted",
  security,
  request: { params: OrgParams },
  responses: { 200: jsonResponse(OrganizationInvitationsResponse, "The invitations"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  return c.json(listOrgInvitations(c.var.ctx, c.var.principal.accountId, c.req.valid("param").org_id), 200);
});
