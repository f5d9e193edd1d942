import { createRoute, z } from "@hono/zod-openapi";
import { ApiKeyCreateResponse } from "../../control-plane/api-keys/schema.js";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../http/router.js";
import { AccountCreateRequest } from "../schema.js";
import { createIsolatedAccount } from "../service.js";

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "post",
  path: "/accounts",
  summary: "Create a new, empty account; its first key is shown once",
  request: {
    body: jsonBody(AccountCreateRequest, false),
  },
  responses: {
    201: jsonResponse(
      z.object({
        account: z.object({
          id: z.string(),
          org_id: z.string(),
          name: z.string(),
          email: z.string(),
          plan: z.string(),
        }),
        key: ApiKeyCreateResponse,
      }),
      "The new account and its first key",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(createIsolatedAccount(c.var.ctx, c.req.valid("json")), 201),
);
