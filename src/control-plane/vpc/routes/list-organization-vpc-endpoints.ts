import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgRegionParams, VPCEndpointsResponse } from "../schema.js";
import { listOrgVpcEndpointsInRegion } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/organizations/{org_id}/vpc/region/{region_id}/vpc_endpoints",
  operationId: "listOrganizationVPCEndpoints",
  tags: ["Organizations"],
  summary: "List the organization's VPC endpoints in a region",
  security,
  request: { params: OrgRegionParams },
  responses: { 200: jsonResponse(VPCEndpointsResponse, "The VPC endpoints"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id, region_id } = c.req.valid("param");
  return c.json(listOrgVpcEndpointsInRegion(c.var.ctx, c.var.principal.accountId, org_id, region_id), 200);
});
