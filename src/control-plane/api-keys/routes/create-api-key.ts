import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { ApiKeyCreateRequest, ApiKeyCreateResponse } from "../schema.js";
import { createApiKey } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/api_keys",
  operationId: "createApiKey",
  tags: ["API Key"],
  summary: "Create an API key; its value is shown once, in this response",
  security,
  request: { body: jsonBody(ApiKeyCreateRequest) },
  responses: { 200: jsonResponse(ApiKeyCreateResponse, "The new key, with its secret"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(createApiKey(c.var.ctx, c.var.principal.accountId, c.req.valid("json").key_name), 200),
);
