import { readFile } from "node:fs/promises";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { methodNotAllowed } from "hono/method-not-allowed";
import type { Logger } from "pino";
import type { Ctx } from "./context.js";
import { ApiError } from "./lib/errors.js";
import { jsonBodyGuard } from "./lib/json-body.js";
import { requireFromPackage } from "./lib/package-root.js";
import { authenticate } from "./repos/api-keys.js";
import account from "./routes/account/index.js";
import apiKeys from "./routes/api-keys/index.js";
import branches from "./routes/branches/index.js";
import databases from "./routes/databases/index.js";
import emulator from "./routes/emulator/index.js";
import endpoints from "./routes/endpoints/index.js";
import operations from "./routes/operations/index.js";
import projects from "./routes/projects/index.js";
import roles from "./routes/roles/index.js";
import { type AppEnv, createRouter } from "./routes/router.js";

export const API_BASE = "/api/v2";

export interface AppOptions {
  logger: Logger;
  /** Hooks for emulator routes that need the worker (clock advance); absent in tests that do not use it. */
  emulator?: EmulatorHooks;
}

export interface EmulatorHooks {
  advanceClock(seconds: number): number;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

function errorBody(c: Context<AppEnv>, code: string, message: string) {
  return { code, message, request_id: c.get("requestId") };
}

/** The peer address of the connection (IPv4-mapped IPv6 shown as plain IPv4). */
export function clientAddress(c: Context): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  const addr = incoming?.socket?.remoteAddress ?? "";
  return addr.startsWith("::ffff:") ? addr.slice(7) : addr;
}

export function createApp(ctx: Ctx, options: AppOptions): OpenAPIHono<AppEnv> {
  const { logger } = options;
  const app = createRouter();

  app.use(async (c, next) => {
    // An X-Request-ID the client sends is honoured when it is a plain token; otherwise one is generated.
    const given = c.req.header("x-request-id");
    const id = given && REQUEST_ID.test(given) ? given : ctx.ids.uuid();
    c.set("requestId", id);
    c.set("ctx", ctx);
    // Set on node's response when there is one (as under @hono/node-server): c.header() would give
    // every response a Headers object, which the adapter then has to take apart again.
    const outgoing = (c.env as { outgoing?: { setHeader(name: string, value: string): void } } | undefined)
      ?.outgoing;
    if (outgoing) outgoing.setHeader("x-request-id", id);
    else c.header("x-request-id", id);
    await next();
  });
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        c.json(
          errorBody(
            c,
            "METHOD_NOT_ALLOWED",
            `${c.req.method} is not allowed on ${c.req.path}; allowed: ${methods.join(", ")}`,
          ),
          405,
          { Allow: methods.join(", ") },
        ),
    }),
  );

  const tooLarge = (c: Context) =>
    c.json(
      errorBody(
        c as Context<AppEnv>,
        "PAYLOAD_TOO_LARGE",
        `request body exceeds the limit of ${ctx.config.maxBodyBytes} bytes`,
      ),
      413,
    );
  const bodyGuard = bodyLimit({ maxSize: ctx.config.maxBodyBytes, onError: tooLarge });
  for (const prefix of [`${API_BASE}/*`, "/_emulator/*"]) {
    app.use(prefix, (c, next) => {
      // GET and HEAD carry no body. A body with a Content-Length (node's parser holds the body to
      // it) is judged by that header, as bodyLimit itself would; bodyLimit looks at the body
      // stream first, which makes the adapter build a full Request and a stream per request, so
      // it only sees chunked bodies, which it counts as they arrive.
      const method = c.req.method;
      if (method === "GET" || method === "HEAD") return next();
      const length = c.req.header("content-length");
      if (length !== undefined && c.req.header("transfer-encoding") === undefined)
        return Number(length) > ctx.config.maxBodyBytes ? Promise.resolve(tooLarge(c)) : next();
      return bodyGuard(c, next);
    });
    app.use(prefix, jsonBodyGuard);
    app.use(prefix, async (c, next) => {
      // An empty body counts as `{}`: clients send POSTs without a body (and some with a JSON
      // content type and no bytes) where the public API makes the body optional.
      if (c.req.method !== "GET" && c.req.method !== "HEAD") {
        const text = await c.req.text();
        // Hono caches bodies as promises although its type says otherwise.
        if (text.trim() === "") {
          // No bytes under another content type (or none, as `neon api -X POST` sends) is no body
          // at all: drop the header so an optional JSON body is not refused with 415.
          if (!/^application\/([\w.-]+\+)?json\b/i.test(c.req.header("content-type") ?? "")) {
            const headers = new Headers(c.req.raw.headers);
            headers.delete("content-type");
            headers.delete("content-length");
            c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
          }
          (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve("{}");
        }
      }
      await next();
    });
  }
  app.use(`${API_BASE}/*`, async (c, next) => {
    c.set("principal", authenticate(ctx, c.req.header("authorization"), clientAddress(c), c.req.raw));
    await next();
  });
  app.use("/_emulator/*", async (c, next) => {
    if (c.req.path !== "/_emulator/health")
      c.set("principal", authenticate(ctx, c.req.header("authorization"), clientAddress(c), c.req.raw));
    await next();
  });

  const api = createRouter()
    .route("/", apiKeys)
    .route("/", projects)
    .route("/", branches)
    .route("/", endpoints)
    .route("/", operations)
    .route("/", roles)
    .route("/", databases)
    .route("/", account);
  app.route(API_BASE, api);
  app.route("/_emulator", emulator(options.emulator));

  app.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", { type: "http", scheme: "bearer" });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "neon-emulator: Neon v2 control-plane API",
      version: "2.0.0",
      description:
        "The Neon v2 management API as served by the emulator. Base path /api/v2; emulator-only routes under /_emulator.",
    },
    servers: [{ url: "/" }],
  });
  // The reference page and its script are served locally, so /docs works without internet access.
  app.get(
    "/docs",
    Scalar({ url: "/openapi.json", pageTitle: "neon-emulator API reference", cdn: "/docs/scalar.js" }),
  );
  app.get("/docs/scalar.js", async (c) => {
    const file = requireFromPackage().resolve("@scalar/api-reference/browser/standalone.js");
    return c.body(await readFile(file), 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=86400",
    });
  });

  app.notFound((c) => c.json(errorBody(c, "NOT_FOUND", `no route for ${c.req.method} ${c.req.path}`), 404));

  app.onError((err, c) => {
    if (err instanceof ApiError) return c.json(errorBody(c, err.code, err.message), err.status);
    if (err instanceof HTTPException) {
      const status = err.status;
      const code =
        status === 400
          ? "INVALID_REQUEST"
          : status === 413
            ? "PAYLOAD_TOO_LARGE"
            : status === 415
              ? "UNSUPPORTED_MEDIA_TYPE"
              : "HTTP_ERROR";
      const message =
        status === 415
          ? "request body must be JSON (Content-Type: application/json)"
          : err.message || "bad request";
      return c.json(errorBody(c, code, message), status);
    }
    if ((err as { code?: string }).code === "ECONNRESET") {
      // The client hung up before its body arrived: nobody hears the answer, and it is no fault
      // of the emulator's, so no error-level log with a stack for each one.
      logger.debug({ requestId: c.get("requestId"), path: c.req.path }, "client aborted the request");
      return c.json(errorBody(c, "REQUEST_ABORTED", "the request was aborted before its body arrived"), 400);
    }
    logger.error(
      { err, requestId: c.get("requestId"), method: c.req.method, path: c.req.path },
      "unhandled error",
    );
    return c.json(
      errorBody(c, "INTERNAL_ERROR", "internal error; see the emulator log for this request id"),
      500,
    );
  });

  return app;
}
