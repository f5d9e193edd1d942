import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { OrgApiKeyCreateRequest, OrgApiKeyCreateResponse } from "../schema.js";
import { createOrgApiKey } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/organizations/{org_id}/api_keys",
  operationId: "createOrgApiKey",
  tags: ["Organizations"],
  summary: "Create an organization API key (for one project with project_id); its value is shown once",
  security,
  request: { params: OrgParams, body: jsonBody(OrgApiKeyCreateRequest) },
  responses: {
    200: jsonResponse(OrgApiKeyCreateResponse, "The new key, with its secret"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(
    createOrgApiKey(c.var.ctx, c.var.principal.accountId, c.req.valid("param").org_id, c.req.valid("json")),
    200,
  ),
);
