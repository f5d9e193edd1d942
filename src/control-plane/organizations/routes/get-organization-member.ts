import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Member, MemberParams } from "../schema.js";
import { getOrgMember } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/organizations/{org_id}/members/{member_id}",
  operationId: "getOrganizationMember",
  tags: ["Organizations"],
  summary: "Get a member of the organization",
  security,
  request: { params: MemberParams },
  responses: { 200: jsonResponse(Member, "The member"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id, member_id } = c.req.valid("param");
  return c.json(getOrgMember(c.var.ctx, c.var.principal.accountId, org_id, member_id), 200);
});
