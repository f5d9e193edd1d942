import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { VPCEndpointsWithRegionResponse } from "../schema.js";
import { listOrgVpcEndpointsAllRegions } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/organizations/{org_id}/vpc/vpc_endpoints",
  operationId: "listOrganizationVPCEndpointsAllRegions",
  tags: ["Organizations"],
  summary: "List the organization's VPC endpoints in every region",
  security,
  request: { params: OrgParams },
  responses: { 200: jsonResponse(VPCEndpointsWithRegionResponse, "The VPC endpoints"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id } = c.req.valid("param");
  return c.json(listOrgVpcEndpointsAllRegions(c.var.ctx, c.var.principal.accountId, org_id), 200);
});
