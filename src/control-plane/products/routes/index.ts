/**
 * One route per operation of the products the emulator does not run (catalog.ts), made from the
 * catalog rather than written out 69 times: each checks its JSON body, when it has one, and
 * answers through productNotEnabled.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { badRequest } from "../../../errors.js";
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

/** One schema per path parameter name, and per list of names (shared by the routes). */
const paramSchemas = new Map<string, z.ZodType>();
const paramObjects = new Map<string, z.ZodObject>();
function paramsOf(path: string) {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const key = names.join(",");
  let schema = paramObjects.get(key);
  if (!schema) {
    for (const name of names)
      if (!paramSchemas.has(name))
        paramSchemas.set(
          name,
          z
            .string()
            .max(1024)
            .openapi({ param: { name, in: "path" } }),
        );
    schema = z.object(Object.fromEntries(names.map((name) => [name, paramSchemas.get(name) as z.ZodType])));
    paramObjects.set(key, schema);
  }
  return schema;
}

function bodyOf(route: ProductRoute) {
  if (route.body !== "json") return {};
  return { body: jsonBody(route.path.startsWith("/projects/auth/") ? WithProject : AnyObject, false) };
}

/**
 * A JSON body where the route takes one: an object (an empty body counts as `{}`), or a 400 as
 * the validators of the other routes answer.
 */
async function jsonObject(c: Context<AppEnv>, schema: z.ZodType): Promise<unknown> {
  const text = await c.req.text();
  let body: unknown = {};
  try {
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw badRequest("invalid request body: not valid JSON");
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw validationError("json", parsed.error);
  return parsed.data;
}

const router = createRouter();
/** The legacy calls on /projects/auth/..., answered by legacyAuthRoutes below. */
const legacy = new Map<string, (typeof PRODUCT_ROUTES)[number]>();
for (const entry of PRODUCT_ROUTES) {
  // Documented from the schemas, served by a plain handler: 69 validated routes cost ~2 MB of
  // resident memory for answers that only look the project, branch and database up.
  router.openAPIRegistry.registerPath(
    createRoute({
      method: entry.method,
      path: entry.path,
      operationId: entry.operationId,
      tags: [entry.tag],
      summary: `${PRODUCT_NAMES[entry.product]}: not run by the emulator; answers as Neon does where it is not enabled (404)`,
      security,
      request: { params: paramsOf(entry.path), ...bodyOf(entry) },
      responses: { ...errorResponses },
    }),
  );
  if (entry.path.startsWith("/projects/auth/")) {
    // A literal `auth` beside /projects/{project_id} would put every request on Hono's slower
    // TrieRouter (see list-shared-projects.ts): these are served by middleware.
    legacy.set(`${entry.method.toUpperCase()} ${entry.path}`, entry);
    continue;
  }
  router.on(entry.method.toUpperCase(), entry.path.replace(/\{(\w+)\}/g, ":$1"), async (c) => {
    if (entry.body === "json") await jsonObject(c, AnyObject);
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
    const body = (await jsonObject(c, WithProject)) as { project_id: string };
    return productNotEnabled(c.var.ctx, c.var.principal.accountId, entry, { project_id: body.project_id });
  };
}

export default router;
