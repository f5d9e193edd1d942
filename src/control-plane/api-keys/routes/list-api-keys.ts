import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ApiKeysListResponseItem } from "../schema.js";
import { listApiKeys } from "../service.js";

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
