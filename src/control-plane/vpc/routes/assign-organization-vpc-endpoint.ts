import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { EmptyResponse } from "../../organizations/schema.js";
import { OrgVpcEndpointParams, VPCEndpointAssignment } from "../schema.js";
import { assignOrgVpcEndpoint } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/organizations/{org_id}/vpc/region/{region_id}/vpc_endpoints/{vpc_endpoint_id}",
  operationId: "assignOrganizationVPCEndpoint",
  tags: ["Organizations"],
  summary: "Assign a VPC endpoint to the organization, or relabel it (recorded; no network effect)",
  security,
  request: { params: OrgVpcEndpointParams, body: jsonBody(VPCEndpointAssignment) },
  responses: { 200: jsonResponse(EmptyResponse, "Assigned"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id, region_id, vpc_endpoint_id } = c.req.valid("param");
  const { label } = c.req.valid("json");
  return c.json(
    assignOrgVpcEndpoint(c.var.ctx, c.var.principal.accountId, org_id, region_id, vpc_endpoint_id, label),
    200,
  );
});
