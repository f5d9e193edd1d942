import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { EmptyResponse } from "../../organizations/schema.js";
import { ProjectVpcEndpointParams } from "../schema.js";
import { deleteProjectRestriction } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/projects/{project_id}/vpc_endpoints/{vpc_endpoint_id}",
  operationId: "deleteProjectVPCEndpoint",
  tags: ["Project"],
  summary: "Lift the project's restriction to a VPC endpoint",
  security,
  request: { params: ProjectVpcEndpointParams },
  responses: { 200: jsonResponse(EmptyResponse, "Lifted"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { project_id, vpc_endpoint_id } = c.req.valid("param");
  return c.json(
    deleteProjectRestriction(c.var.ctx, c.var.principal.accountId, project_id, vpc_endpoint_id),
    200,
  );
});
