import { createRoute, z } from "@hono/zod-openapi";
import { revokeApiKey } from "../../repos/api-keys.js";
import { createRouter, errorResponses, jsonResponse, security } from "../router.js";
import { ApiKeyRevokeResponse } from "../schemas.js";

const Params = z.object({
  key_id: z.coerce
    .number({ message: "must be an integer key id" })
    .int("must be an integer key id")
    .positive("must be a positive key id")
    .max(Number.MAX_SAFE_INTEGER)
    .openapi({ param: { name: "key_id", in: "path" }, type: "integer" }),
});

const route = createRoute({
  method: "delete",
  path: "/api_keys/{key_id}",
  operationId: "revokeApiKey",
  tags: ["API Key"],
  summary: "Revoke an API key, immediately and irreversibly",
  security,
  request: { params: Params },
  responses: { 200: jsonResponse(ApiKeyRevokeResponse, "The revoked key"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(revokeApiKey(c.var.ctx, c.var.principal.accountId, c.req.valid("param").key_id), 200),
);
