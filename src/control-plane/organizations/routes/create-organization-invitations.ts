import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { OrganizationInvitationsResponse, OrganizationInvitesCreateRequest } from "../schema.js";
import { createOrgInvitations } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/organizations/{org_id}/invitations",
  operationId: "createOrganizationInvitations",
  tags: ["Organizations"],
  summary: "Invite users by email; one who has an account joins at once",
  security,
  request: { params: OrgParams, body: jsonBody(OrganizationInvitesCreateRequest) },
  responses: {
    200: jsonResponse(OrganizationInvitationsResponse, "The invitations made"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const { org_id } = c.req.valid("param");
  const { invitations } = c.req.valid("json");
  return c.json(createOrgInvitations(c.var.ctx, c.var.principal.accountId, org_id, invitations), 200);
});
