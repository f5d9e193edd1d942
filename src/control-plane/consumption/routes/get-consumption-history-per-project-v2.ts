import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { HistoryV2Query, HistoryV2Response } from "../schema.js";
import { projectHistoryV2 } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/consumption_history/v2/projects",
  operationId: "getConsumptionHistoryPerProjectV2",
  tags: ["Consumption"],
  summary: "Named consumption metrics of each project per timeframe",
  security,
  request: { query: HistoryV2Query },
  responses: { 200: jsonResponse(HistoryV2Response, "The consumption history"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(projectHistoryV2(c.var.ctx, c.var.principal.accountId, c.req.valid("query")), 200),
);
