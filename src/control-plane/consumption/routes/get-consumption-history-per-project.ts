import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { HistoryV1Query, HistoryV1Response } from "../schema.js";
import { projectHistoryV1 } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/consumption_history/projects",
  operationId: "getConsumptionHistoryPerProject",
  tags: ["Consumption"],
  summary:
    "Consumption of each project per timeframe (active and compute time, storage), from the computes' recorded activity",
  security,
  request: { query: HistoryV1Query },
  responses: { 200: jsonResponse(HistoryV1Response, "The consumption history"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(projectHistoryV1(c.var.ctx, c.var.principal.accountId, c.req.valid("query")), 200),
);
