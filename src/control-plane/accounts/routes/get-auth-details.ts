import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { authDetails } from "../service.js";

const route = createRoute({
  tags: ["Auth"],
  security,
  method: "get",
  path: "/auth",
  operationId: "getAuthDetails",
  summary: "How the request was authenticated",
  responses: {
    200: jsonResponse(
      z.object({
        account_id: z.string(),
        auth_method: z.literal("api_key_org"),
        auth_data: z.string().optional(),
      }),
      "Authentication details",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(authDetails(c.var.ctx, c.var.principal.accountId), 200),
);
