import { createRoute, z } from "@hono/zod-openapi";
import { listApiKeys } from "../../repos/api-keys.js";
import { createRouter, errorResponses, jsonResponse, security } from "../router.js";
import { ApiKeysListResponseItem } from "../schemas.js";

const route = createRoute({
  method: "get",
  path: "/api_keys",
  operationId: "listApiKeys",
  tags: ["API Key"],
  summary: "List API keys (never includes a key value)",
  security,
  responses: {
    200: jsonResponse(z.array(ApiKeysListResponseItem), "The account's active keys"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(listApiKeys(c.var.ctx, c.var.principal.accountId), 200),
);
