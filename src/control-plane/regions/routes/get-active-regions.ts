import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { DEFAULT_REGION, REGIONS } from "../rules.js";

const route = createRoute({
  tags: ["Region"],
  security,
  method: "get",
  path: "/regions",
  operationId: "getActiveRegions",
  summary: "Regions projects can be created in",
  request: { query: z.object({ org_id: z.string().optional() }) },
  responses: {
    200: jsonResponse(
      z.object({
        regions: z.array(
          z.object({
            region_id: z.string(),
            name: z.string(),
            default: z.boolean(),
            geo_lat: z.string(),
            geo_long: z.string(),
          }),
        ),
      }),
      "Regions",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json({ regions: REGIONS.map((r) => ({ ...r, default: r.region_id === DEFAULT_REGION })) }, 200),
);
