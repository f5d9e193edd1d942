import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgVpcEndpointParams, VPCEndpointDetails } from "../schema.js";
import { getOrgVpcEndpoint } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/organizations/{org_id}/vpc/region/{region_id}/vpc_endpoints/{vpc_endpoint_id}",
  operationId: "getOrganizationVPCEndpointDetails",
  tags: ["Organizations"],
  summary: "A VPC endpoint's state and the projects restricted to it",
  security,
  request: { params: OrgVpcEndpointParams },
  responses: { 200: jsonResponse(VPCEndpointDetails, "The VPC endpoint"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id, region_id, vpc_endpoint_id } = c.req.valid("param");
  return c.json(
    getOrgVpcEndpoint(c.var.ctx, c.var.principal.accountId, org_id, region_id, vpc_endpoint_id),
    200,
  );
});
