import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { MembersQuery, OrganizationMembersResponse } from "../schema.js";
import { listOrgMembers } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/organizations/{org_id}/members",
  operationId: "getOrganizationMembers",
  tags: ["Organizations"],
  summary: "List the organization's members (its account's user, and users who joined by invitation)",
  security,
  request: { params: OrgParams, query: MembersQuery },
  responses: { 200: jsonResponse(OrganizationMembersResponse, "The members"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id } = c.req.valid("param");
  return c.json(listOrgMembers(c.var.ctx, c.var.principal.accountId, org_id, c.req.valid("query")), 200);
});
