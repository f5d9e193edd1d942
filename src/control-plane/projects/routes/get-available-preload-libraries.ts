import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { preloadLibraries } from "../service.js";

const AvailablePreloadLibrary = z
  .object({
    library_name: z.string(),
    description: z.string(),
    is_default: z.boolean(),
    is_experimental: z.boolean(),
    version: z.string(),
  })
  .openapi("AvailablePreloadLibrary");

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/available_preload_libraries",
  operationId: "getAvailablePreloadLibraries",
  tags: ["Project"],
  summary: "Libraries settings.preload_libraries.enabled_libraries may name (loaded when a compute starts)",
  security,
  request: { params: ProjectParams },
  responses: {
    200: jsonResponse(z.object({ libraries: z.array(AvailablePreloadLibrary) }), "The libraries"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(preloadLibraries(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id), 200),
);
