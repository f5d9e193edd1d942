import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgApiKeyRevokeResponse, OrgKeyIdParams } from "../schema.js";
import { revokeOrgApiKey } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/organizations/{org_id}/api_keys/{key_id}",
  operationId: "revokeOrgApiKey",
  tags: ["Organizations"],
  summary: "Revoke an organization API key, immediately and irreversibly",
  security,
  request: { params: OrgKeyIdParams },
  responses: { 200: jsonResponse(OrgApiKeyRevokeResponse, "The revoked key"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id, key_id } = c.req.valid("param");
  return c.json(revokeOrgApiKey(c.var.ctx, c.var.principal.accountId, org_id, key_id), 200);
});
