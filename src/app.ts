import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import { methodNotAllowed } from "hono/method-not-allowed";
import type { Logger } from "pino";
import { consoleMethodNotAllowed, createConsole } from "./console/routes/index.js";
import type { Ctx } from "./context.js";
import accounts from "./control-plane/accounts/routes/index.js";
import apiKeys from "./control-plane/api-keys/routes/index.js";
import branchRestore from "./control-plane/branch-restore/routes/restore-branch.js";
import branchSchema from "./control-plane/branch-schema/routes/index.js";
import branches from "./control-plane/branches/routes/index.js";
import connectionUri from "./control-plane/connection/routes/get-connection-uri.js";
import consumption from "./control-plane/consumption/routes/index.js";
import endpoints from "./control-plane/endpoints/routes/index.js";
import jwks from "./control-plane/jwks/routes/index.js";
import operations from "./control-plane/operations/routes/index.js";
import organizations from "./control-plane/organizations/routes/index.js";
import permissions from "./control-plane/permissions/routes/index.js";
import products, { legacyAuthRoutes } from "./control-plane/products/routes/index.js";
import projects from "./control-plane/projects/routes/index.js";
import regions from "./control-plane/regions/routes/get-active-regions.js";
import rolesDatabases from "./control-plane/roles-databases/routes/index.js";
import snapshots from "./control-plane/snapshots/routes/index.js";
import vpc from "./control-plane/vpc/routes/index.js";
import emulator from "./emulator/routes/index.js";
import { errorResponse, onError } from "./http/errors.js";
import { jsonBodyGuard } from "./http/json-body.js";
import { bodySizeLimit, emptyBodyAsObject, requestContext, requireApiKey } from "./http/middleware.js";
import { projectScope } from "./http/project-scope.js";
import { rateLimit } from "./http/rate-limit.js";
import { type AppEnv, createRouter } from "./http/router.js";
import { sharedProjects } from "./http/shared-projects.js";
import { RealClock } from "./platform/clock.js";
import type { EventSink } from "./platform/events.js";
import { requireFromPackage } from "./platform/package-root.js";
import { RateLimiter } from "./platform/rate-limiter.js";

export const API_BASE = "/api/v2";

/** Request rates are counted on wall time, whatever the emulator's clock. */
const wallClock = new RealClock();

/** What the HTTP layer needs of the worker: wake-ups for new work, and the manual clock's advance. */
export interface WorkerHooks {
  notify(): void;
  /** Worker.advanceSettled: answers once everything of the account due up to its new time has happened. */
  advanceSettled(accountId: string, seconds: number): number | Promise<number>;
}

export interface AppOptions {
  logger: Logger;
  worker: WorkerHooks;
  /** Also hears every event a service returns (runtime.ts: the compute driver discards what was deleted). */
  onEvents?: EventSink;
  /** Neon's SQL over HTTP (`/sql`, front-door/sql-over-http.ts), when computes are real. */
  sql?: SqlHandler;
  /**
   * @hono/node-server's RESPONSE_ALREADY_SENT: a handler that wrote node's response itself returns
   * it. (Made by the adapter before it replaces the global Response; one made later is not recognised.)
   */
  alreadySent?: Response;
  /** Wall time for request rates (tests give their own); a real clock by default. */
  rateClock?: () => number;
}

/** SQL over HTTP, as node's request and response or as a web Request. */
export interface SqlHandler {
  serveNode(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void>;
  handle(request: Request): Promise<Response>;
  /** One statement for the console's SQL editor (SqlOverHttp.statement). */
  statement(
    connectionString: string,
    query: string,
    peer?: string,
  ): Promise<{ status: number; body: unknown }>;
}

/** createApp(ctx, options): the Hono app over the services; one middleware chain, one onError, /openapi.json. */
export function createApp(ctx: Ctx, options: AppOptions): OpenAPIHono<AppEnv> {
  const { logger, worker, onEvents } = options;
  const app = createRouter();

  app.use(
    requestContext(ctx, {
      events: (events) => {
        worker.notify();
        onEvents?.(events);
      },
      advanceClock: (accountId, seconds) => worker.advanceSettled(accountId, seconds),
    }),
  );
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        // The console answers with a page of its own, not the API's JSON.
        c.req.path.startsWith("/app/")
          ? consoleMethodNotAllowed(c, methods)
          : errorResponse(
              c,
              "METHOD_NOT_ALLOWED",
              `${c.req.method} is not allowed on ${c.req.path}; allowed: ${methods.join(", ")}`,
              { Allow: methods.join(", ") },
            ),
    }),
  );
  // The key is checked before any body is read: a client without one holds nothing of the server.
  app.use(`${API_BASE}/*`, requireApiKey(ctx));
  if (ctx.config.rateLimits)
    app.use(
      `${API_BASE}/*`,
      rateLimit(new RateLimiter(ctx.config.rateLimits, options.rateClock ?? (() => wallClock.now()))),
    );
  app.use(
    "/_emulator/*",
    requireApiKey(ctx, ["/_emulator/health", "/_emulator/ca.pem", "/_emulator/openapi.json"]),
  );
  app.use("/app/*", bodySizeLimit(ctx.config.maxBodyBytes));
  for (const prefix of [`${API_BASE}/*`, "/_emulator/*"]) {
    app.use(prefix, bodySizeLimit(ctx.config.maxBodyBytes));
    app.use(prefix, jsonBodyGuard);
    app.use(prefix, emptyBodyAsObject);
  }
  app.use(`${API_BASE}/*`, projectScope(API_BASE), sharedProjects(API_BASE), legacyAuthRoutes(API_BASE));
  app.use("/_emulator/*", projectScope("/_emulator"), sharedProjects("/_emulator"));

  const api = createRouter()
    .route("/", apiKeys)
    .route("/", projects)
    .route("/", branches)
    .route("/", branchSchema)
    .route("/", branchRestore)
    .route("/", snapshots)
    .route("/", endpoints)
    .route("/", operations)
    .route("/", rolesDatabases)
    .route("/", accounts)
    .route("/", organizations)
    .route("/", permissions)
    .route("/", jwks)
    .route("/", vpc)
    .route("/", products)
    .route("/", consumption)
    .route("/", regions)
    .route("/", connectionUri);
  app.route(API_BASE, api);
  const { sql, alreadySent } = options;
  if (sql)
    app.all("/sql", async (c) => {
      // Under @hono/node-server, node's request and response are used as they are.
      const node = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
      if (!alreadySent || !node?.incoming || !node.outgoing) return sql.handle(c.req.raw);
      await sql.serveNode(node.incoming, node.outgoing);
      return alreadySent;
    });
  app.route("/_emulator", emulator);
  // The web console: pages at /app (a browser at / is sent there).
  app.route("/app", createConsole({ logger, wallClock, sql }));
  app.get("/", (c) => c.redirect("/app/projects", 303));

  // Two documents, each with its base in `servers`: the Neon routes as the public document lists
  // them (paths without /api/v2, so `neon api --spec-url` and generators match them), and the
  // emulator's own routes apart. Generated once, on first request, from the route schemas.
  const documents = {
    "/openapi.json": lazyDocument(api, API_BASE, {
      title: "neon-emulator: Neon v2 management API",
      description:
        "The Neon v2 API as the emulator serves it. Emulator-only routes: /_emulator/openapi.json.",
    }),
    "/_emulator/openapi.json": lazyDocument(emulator, "/_emulator", {
      title: "neon-emulator: emulator-only routes",
      description: "Clock, faults, reset, accounts, connect and health: routes the real Neon does not have.",
    }),
  };
  for (const [path, document] of Object.entries(documents)) app.get(path, (c) => c.json(document()));
  // The reference page and its script are served locally, so /docs works without internet access.
  app.get(
    "/docs",
    Scalar({ url: "/openapi.json", pageTitle: "neon-emulator API reference", cdn: "/docs/scalar.js" }),
  );
  // One copy of the 3.5 MB script for every reader (read on first use), revalidated by its ETag.
  let script: Promise<{ body: Uint8Array<ArrayBuffer>; etag: string }> | undefined;
  app.get("/docs/scalar.js", async (c) => {
    script ??= readFile(requireFromPackage().resolve("@scalar/api-reference/browser/standalone.js")).then(
      (body) => ({ body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` }),
    );
    script.catch(() => {
      script = undefined;
    });
    const { body, etag } = await script;
    const headers = { etag, "cache-control": "public, max-age=86400" };
    if (c.req.header("if-none-match") === etag) return c.body(null, 304, headers);
    return c.body(body, 200, { ...headers, "content-type": "text/javascript; charset=utf-8" });
  });

  app.notFound((c) => errorResponse(c, "NOT_FOUND", `no route for ${c.req.method} ${c.req.path}`));
  app.onError(onError(logger));
  return app;
}

/** An OpenAPI 3.1 document of one router's routes, made on first use and kept. */
function lazyDocument(
  router: OpenAPIHono<AppEnv>,
  base: string,
  info: { title: string; description: string },
): () => unknown {
  let document: unknown;
  return () => {
    if (document) return document;
    router.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", {
      type: "http",
      scheme: "bearer",
    });
    document = router.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { ...info, version: "2.0.0" },
      servers: [{ url: base }],
    });
    return document;
  };
}
