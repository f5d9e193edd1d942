import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { OrgParams } from "../../schema.js";
import { EmptyResponse } from "../schema.js";
import { clearOrgSpendingLimit } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/organizations/{org_id}/billing/spending_limit",
  operationId: "deleteOrganizationSpendingLimit",
  tags: ["Organizations"],
  summary: "Remove the monthly spending limit (idempotent); paid plans",
  security,
  request: { params: OrgParams },
  responses: { 200: jsonResponse(EmptyResponse, "Removed"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(clearOrgSpendingLimit(c.var.ctx, c.var.principal.accountId, c.req.valid("param").org_id), 200),
);
