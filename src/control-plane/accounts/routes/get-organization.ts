import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Organization } from "../schema.js";
import { organization } from "../service.js";

const route = createRoute({
  tags: ["Organizations"],
  security,
  method: "get",
  path: "/organizations/{org_id}",
  operationId: "getOrganization",
  summary: "The organization of the key's account (each emulated account has one)",
  request: { params: z.object({ org_id: z.string().regex(/^[a-z0-9-]{1,60}$/) }) },
  responses: {
    200: jsonResponse(Organization, "The organization"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(organization(c.var.ctx, c.var.principal.accountId, c.req.valid("param").org_id), 200),
);
