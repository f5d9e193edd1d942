import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { EmptyResponse } from "../../organizations/schema.js";
import { ProjectVpcEndpointParams, VPCEndpointAssignment } from "../schema.js";
import { assignProjectVpcEndpoint } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/vpc_endpoints/{vpc_endpoint_id}",
  operationId: "assignProjectVPCEndpoint",
  tags: ["Project"],
  summary: "Restrict the project to a VPC endpoint of its organization (recorded; no network effect)",
  security,
  request: { params: ProjectVpcEndpointParams, body: jsonBody(VPCEndpointAssignment) },
  responses: { 200: jsonResponse(EmptyResponse, "Restricted"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { project_id, vpc_endpoint_id } = c.req.valid("param");
  const { label } = c.req.valid("json");
  return c.json(
    assignProjectVpcEndpoint(c.var.ctx, c.var.principal.accountId, project_id, vpc_endpoint_id, label),
    200,
  );
});
