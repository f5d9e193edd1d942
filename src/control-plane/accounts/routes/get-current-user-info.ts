import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { currentUser } from "../service.js";

const route = createRoute({
  tags: ["Users"],
  security,
  method: "get",
  path: "/users/me",
  operationId: "getCurrentUserInfo",
  summary: "The user the API key belongs to",
  responses: {
    200: jsonResponse(
      z.object({
        active_seconds_limit: z.number().int(),
        auth_accounts: z.array(
          z.object({
            email: z.string(),
            image: z.string(),
            login: z.string(),
            name: z.string(),
            provider: z.string(),
          }),
        ),
        email: z.string(),
        id: z.string(),
        image: z.string(),
        login: z.string(),
        name: z.string(),
        last_name: z.string(),
        projects_limit: z.number().int(),
        branches_limit: z.number().int(),
        max_autoscaling_limit: z.number(),
        plan: z.string(),
      }),
      "The current user",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(currentUser(c.var.ctx, c.var.principal.accountId), 200),
);
