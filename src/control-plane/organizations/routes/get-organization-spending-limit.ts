import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { SpendingLimitResponse } from "../schema.js";
import { getSpendingLimit } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/organizations/{org_id}/billing/spending_limit",
  operationId: "getOrganizationSpendingLimit",
  tags: ["Organizations"],
  summary: "The organization's monthly spending limit (null: none set); paid plans",
  security,
  request: { params: OrgParams },
  responses: { 200: jsonResponse(SpendingLimitResponse, "The spending limit"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(getSpendingLimit(c.var.ctx, c.var.principal.accountId, c.req.valid("param").org_id), 200),
);
