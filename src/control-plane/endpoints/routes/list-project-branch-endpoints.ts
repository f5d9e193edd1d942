import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { Endpoint } from "../schema.js";
import { listBranchEndpoints } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/branches/{branch_id}/endpoints",
  operationId: "listProjectBranchEndpoints",
  tags: ["Branch"],
  summary: "List a branch's endpoints",
  security,
  request: { params: BranchParams },
  responses: {
    200: jsonResponse(z.object({ endpoints: z.array(Endpoint) }), "The endpoints"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(listBranchEndpoints(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id), 200);
});
