import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { Member, MemberParams, OrganizationMemberUpdateRequest } from "../schema.js";
import { updateOrgMember } from "../service.js";

const route = createRoute({
  method: "patch",
  path: "/organizations/{org_id}/members/{member_id}",
  operationId: "updateOrganizationMember",
  tags: ["Organizations"],
  summary: "Change a member's role (the organization keeps at least one admin)",
  security,
  request: { params: MemberParams, body: jsonBody(OrganizationMemberUpdateRequest) },
  responses: { 200: jsonResponse(Member, "The updated member"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id, member_id } = c.req.valid("param");
  const { role } = c.req.valid("json");
  return c.json(updateOrgMember(c.var.ctx, c.var.principal.accountId, org_id, member_id, role), 200);
});
