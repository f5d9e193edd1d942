import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { OrgApiKeysListResponseItem } from "../schema.js";
import { listOrgApiKeys } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/organizations/{org_id}/api_keys",
  operationId: "listOrgApiKeys",
  tags: ["Organizations"],
  summary: "List the organization's API keys (never includes a key value)",
  security,
  request: { params: OrgParams },
  responses: {
    200: jsonResponse(z.array(OrgApiKeysListResponseItem), "The organization's active keys"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(listOrgApiKeys(c.var.ctx, c.var.principal.accountId, c.req.valid("param").org_id), 200),
);
