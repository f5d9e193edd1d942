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
import { ProjectParams } from "../../schema.js";
import { countBranches } from "../service.js";

const BranchCountQuery = z.object({ search: z.string().max(256).optional() });

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/branches/count",
  operationId: "countProjectBranches",
  tags: ["Branch"],
  summary: "Count the project's branches (those whose name or id contains `search`, when given)",
  security,
  request: { params: ProjectParams, query: BranchCountQuery },
  responses: { 200: jsonResponse(z.object({ count: z.number().int() }), "The count"), ...errorResponses },
});

/**
 * GET /projects/{p}/branches/count is answered by this middleware of GET
 * /projects/{p}/branches/{branch_id} (get-project-branch.ts), for the reason list-shared-projects.ts
 * gives: a literal segment beside a parameter would put every request on Hono's slower router.
 * No branch id is `count`.
 */
export const branchCount: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.param("branch_id") !== "count") return next();
  const params = ProjectParams.safeParse({ project_id: c.req.param("project_id") });
  if (!params.success) throw validationError("param", params.error);
  const query = BranchCountQuery.safeParse(c.req.query());
  if (!query.success) throw validationError("query", query.error);
  return c.json(
    countBranches(c.var.ctx, c.var.principal.accountId, params.data.project_id, query.data.search),
    200,
  );
};

/** The route's documentation (its handling is branchCount above). */
const router = createRouter();
router.openAPIRegistry.registerPath(route);
export default router;
