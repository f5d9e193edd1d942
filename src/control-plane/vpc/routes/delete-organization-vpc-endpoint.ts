import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { EmptyResponse } from "../../organizations/schema.js";
import { OrgVpcEndpointParams } from "../schema.js";
import { deleteOrgVpcEndpoint } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/organizations/{org_id}/vpc/region/{region_id}/vpc_endpoints/{vpc_endpoint_id}",
  operationId: "deleteOrganizationVPCEndpoint",
  tags: ["Organizations"],
  summary: "Delete a VPC endpoint from the organization (for good) and lift its project restrictions",
  security,
  request: { params: OrgVpcEndpointParams },
  responses: { 200: jsonResponse(EmptyResponse, "Deleted"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id, region_id, vpc_endpoint_id } = c.req.valid("param");
  return c.json(
    deleteOrgVpcEndpoint(c.var.ctx, c.var.principal.accountId, org_id, region_id, vpc_endpoint_id),
    200,
  );
});
