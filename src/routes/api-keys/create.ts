import { createRoute } from "@hono/zod-openapi";
import { createApiKey } from "../../repos/api-keys.js";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../router.js";
import { ApiKeyCreateRequest, ApiKeyCreateResponse } from "../schemas.js";

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
