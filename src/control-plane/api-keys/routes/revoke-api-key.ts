import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ApiKeyRevokeResponse, KeyIdParams } from "../schema.js";
import { revokeApiKey } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/api_keys/{key_id}",
  operationId: "revokeApiKey",
  tags: ["API Key"],
  summary: "Revoke an API key, immediately and irreversibly",
  security,
  request: { params: KeyIdParams },
  responses: { 200: jsonResponse(ApiKeyRevokeResponse, "The revoked key"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(revokeApiKey(c.var.ctx, c.var.principal.accountId, c.req.valid("param").key_id), 200),
);
