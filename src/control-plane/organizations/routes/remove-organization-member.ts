import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { EmptyResponse, MemberParams } from "../schema.js";
import { removeOrgMember } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/organizations/{org_id}/members/{member_id}",
  operationId: "removeOrganizationMember",
  tags: ["Organizations"],
  summary: "Remove a member (never the last admin)",
  security,
  request: { params: MemberParams },
  responses: { 200: jsonResponse(EmptyResponse, "Removed"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id, member_id } = c.req.valid("param");
  return c.json(removeOrgMember(c.var.ctx, c.var.principal.accountId, org_id, member_id), 200);
});
