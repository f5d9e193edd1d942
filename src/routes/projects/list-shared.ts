import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../router.js";
import { intQuery, ProjectListItem } from "../schemas.js";

const route = createRoute({
  method: "get",
  path: "/projects/shared",
  operationId: "listSharedProjects",
  tags: ["Project"],
  summary: "List projects shared with the account (the emulator has no sharing: always empty)",
  security,
  request: {
    query: z.object({
      limit: intQuery(1, 400).optional(),
      cursor: z.string().optional(),
      search: z.string().max(256).optional(),
      timeout: z.string().optional(),
    }),
  },
  responses: {
    200: jsonResponse(z.object({ projects: z.array(ProjectListItem) }), "Shared projects"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => c.json({ projects: [] }, 200));
