import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { VPCEndpointsResponse } from "../schema.js";
import { listProjectRestrictions } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/vpc_endpoints",
  operationId: "listProjectVPCEndpoints",
  tags: ["Project"],
  summary: "List the VPC endpoints the project is restricted to",
  security,
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(VPCEndpointsResponse, "The restrictions"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  return c.json(
    listProjectRestrictions(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id),
    200,
  );
});
