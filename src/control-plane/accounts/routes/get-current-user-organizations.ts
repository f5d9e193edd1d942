import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Organization } from "../schema.js";
import { currentOrganizations } from "../service.js";

const route = createRoute({
  tags: ["Users"],
  security,
  method: "get",
  path: "/users/me/organizations",
  operationId: "getCurrentUserOrganizations",
  summary: "The organizations of the current user (one per emulated account)",
  responses: {
    200: jsonResponse(
      z.object({
        organizations: z.array(Organization),
      }),
      "Organizations",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(currentOrganizations(c.var.ctx, c.var.principal.accountId), 200),
);
