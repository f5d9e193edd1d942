import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { SpendingLimitResponse, SpendingLimitUpdateRequest } from "../schema.js";
import { setOrgSpendingLimit } from "../service.js";

const route = createRoute({
  method: "put",
  path: "/organizations/{org_id}/billing/spending_limit",
  operationId: "setOrganizationSpendingLimit",
  tags: ["Organizations"],
  summary: "Set the monthly spending limit (alert-only: nothing is suspended); paid plans",
  security,
  request: { params: OrgParams, body: jsonBody(SpendingLimitUpdateRequest) },
  responses: { 200: jsonResponse(SpendingLimitResponse, "The spending limit"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { org_id } = c.req.valid("param");
  const { spending_limit_cents } = c.req.valid("json");
  return c.json(setOrgSpendingLimit(c.var.ctx, c.var.principal.accountId, org_id, spending_limit_cents), 200);
});
