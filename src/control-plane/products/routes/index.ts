/**
 * One route per operation of the products the emulator does not run (catalog.ts), made from the
 * catalog rather than written out 66 times: each validates its path (and JSON body, when it has
 * one) and answers through productNotEnabled.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import {
  type AppEnv,
  createRouter,
  errorResponses,
  jsonBody,
  security,
  validationError,
} from "../../../http/router.js";
import { PRODUCT_NAMES, PRODUCT_ROUTES, type ProductRoute } from "../catalog.js";
import { productNotEnabled } from "../service.js";

const AnyObject = z.record(z.string(), z.unknown());
/** Legacy Neon Auth calls name their project in the body. */
const WithProject = z.looseObject({ project_id: z.string().max(60) });

function paramsOf(path: string) {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  return z.object(
    Object.fromEntries(
      names.map((name) => [
        name,
        z
          .string()
          .max(1024)
          .openapi({ param: { name, in: "path" } }),
      ]),
    ),
  );
}

function bodyOf(route: ProductRoute) {
  if (route.body !== "json") return {};
  return { body: jsonBody(route.path.startsWith("/projects/auth/") ? WithProject : AnyObject, false) };
}

const router = createRouter();
/** The legacy calls on /projects/auth/..., answered by legacyAuthRoutes below. */
const legacy = new Map<string, (typeof PRODUCT_ROUTES)[number]>();
for (const entry of PRODUCT_ROUTES) {
  const route = createRoute({
    method: entry.method,
    path: entry.path,
    operationId: entry.operationId,
    tags: [entry.tag],
    summary: `${PRODUCT_NAMES[entry.product]}: not run by the emulator; answers as Neon does where it is not enabled (404)`,
    security,
    request: { params: paramsOf(entry.path), ...bodyOf(entry) },
    responses: { ...errorResponses },
  });
  if (entry.path.startsWith("/projects/auth/")) {
    // A literal `auth` beside /projects/{project_id} would put every request on Hono's slower
    // TrieRouter (see list-shared-projects.ts): these are documented here and served by middleware.
    router.openAPIRegistry.registerPath(route);
    legacy.set(`${entry.method.toUpperCase()} ${entry.path}`, entry);
    continue;
  }
  router.openapi(route, (c) => {
    const params = c.req.param() as Record<string, string>;
    return productNotEnabled(c.var.ctx, c.var.principal.accountId, entry, {
      project_id: params.project_id,
      branch_id: params.branch_id,
      database_name: params.database_name,
    });
  });
}

/** POST /api/v2/projects/auth/{create,keys,user,transfer_ownership}: the project is named in the body. */
export function legacyAuthRoutes(base: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const entry = legacy.get(`${c.req.method} ${c.req.path.slice(base.length)}`);
    if (!entry) return next();
    const text = await c.req.text();
    let body: unknown = {};
    try {
      body = text === "" ? {} : JSON.parse(text);
    } catch {
      // the JSON guard answered malformed JSON before this runs
    }
    const parsed = WithProject.safeParse(body);
    if (!parsed.success) throw validationError("json", parsed.error);
    return productNotEnabled(c.var.ctx, c.var.principal.accountId, entry, {
      project_id: parsed.data.project_id,
    });
  };
}

export default router;
