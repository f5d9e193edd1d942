import { createRoute, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import {
  type AppEnv,
  createRouter,
  errorResponses,
  jsonResponse,
  security,
  validationError,
} from "../../../http/router.js";
import { Pagination } from "../../operations/schema.js";
import { listSharedProjects } from "../../permissions/service.js";
import { ProjectListItem, SharedProjectListQuery } from "../schema.js";

const route = createRoute({
  method: "get",
  path: "/projects/shared",
  operationId: "listSharedProjects",
  tags: ["Project"],
  summary:
    "List projects other accounts share with the caller's user (POST /projects/{project_id}/permissions)",
  security,
  request: { query: SharedProjectListQuery },
  responses: {
    200: jsonResponse(
      z.object({ projects: z.array(ProjectListItem), pagination: Pagination.optional() }),
      "Shared projects; `pagination.cursor` is present while more remain",
    ),
    ...errorResponses,
  },
});

/**
 * GET /projects/shared is answered by this middleware of GET /projects/{project_id} (get-project.ts):
 * Hono's fastest router (RegExpRouter) refuses a literal segment beside a parameter at the same
 * place, and a single such pair of routes would put every request on the slower TrieRouter
 * (~20 us per request over HTTP). No project id is `shared`.
 */
export const sharedProjects: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.param("project_id") !== "shared") return next();
  const query = SharedProjectListQuery.safeParse(c.req.query());
  if (!query.success) throw validationError("query", query.error);
  return c.json(listSharedProjects(c.var.ctx, c.var.principal, query.data), 200);
};

/** The route's documentation (its handling is sharedProjects above). */
const router = createRouter();
router.openAPIRegistry.registerPath(route);
export default router;
