import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { BranchHistoryQuery, BranchHistoryResponse } from "../schema.js";
import { branchHistoryV2 } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/consumption_history/v2/branches",
  operationId: "getConsumptionHistoryPerBranchV2",
  tags: ["Consumption"],
  summary: "Named consumption metrics of each branch of the named projects per timeframe",
  security,
  request: { query: BranchHistoryQuery },
  responses: { 200: jsonResponse(BranchHistoryResponse, "The consumption history"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(branchHistoryV2(c.var.ctx, c.var.principal.accountId, c.req.valid("query")), 200),
);
