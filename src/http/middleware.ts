import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Ctx } from "../context.js";
import { authenticate } from "../control-plane/api-keys/service.js";
import type { EventSink } from "../platform/events.js";
import { plainAddress } from "../platform/peer.js";
import { errorResponse } from "./errors.js";
import type { AppEnv } from "./router.js";

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The peer address of the connection (IPv4-mapped IPv6 shown as plain IPv4). */
export function clientAddress(c: Context): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return plainAddress(incoming?.socket?.remoteAddress ?? "");
}

/**
 * Gives the request its context, the worker's hooks and a request id: an X-Request-ID the client sends is
 * honoured when it is a plain token; otherwise one is generated.
 */
export function requestContext(
  ctx: Ctx,
  hooks: {
    events: EventSink;
    advanceClock: (accountId: string, seconds: number) => number | Promise<number>;
  },
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header("x-request-id");
    const id = given && REQUEST_ID.test(given) ? given : ctx.ids.uuid();
    c.set("requestId", id);
    c.set("ctx", ctx);
    c.set("events", hooks.events);
    c.set("advanceClock", hooks.advanceClock);
    // Set on node's response when there is one (as under @hono/node-server): c.header() would give
    // every response a Headers object, which the adapter then has to take apart again.
    const outgoing = (c.env as { outgoing?: { setHeader(name: string, value: string): void } } | undefined)
      ?.outgoing;
    if (outgoing) outgoing.setHeader("x-request-id", id);
    else c.header("x-request-id", id);
    await next();
  };
}

/** 413 for a body over `maxBytes`. */
export function bodySizeLimit(maxBytes: number): MiddlewareHandler {
  const tooLarge = (c: Context) =>
    errorResponse(c, "PAYLOAD_TOO_LARGE", `request body exceeds the limit of ${maxBytes} bytes`);
  const bodyGuard = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return (c, next) => {
    // GET and HEAD carry no body. A body with a Content-Length (node's parser holds the body to
    // it) is judged by that header, as bodyLimit itself would; bodyLimit looks at the body
    // stream first, which makes the adapter build a full Request and a stream per request, so
    // it only sees chunked bodies, which it counts as they arrive.
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined)
      return Number(length) > maxBytes ? Promise.resolve(tooLarge(c)) : next();
    return bodyGuard(c, next);
  };
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * An empty body counts as `{}`: clients send POSTs without a body (and some with a JSON content
 * type and no bytes) where the public API makes the body optional.
 */
export const emptyBodyAsObject: MiddlewareHandler = async (c, next) => {
  // Only the methods the API takes a body with: a Request cannot even be made for others (TRACE),
  // which no route serves (405).
  if (BODY_METHODS.has(c.req.method)) {
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
};

/** Every request but the listed paths carries a valid API key; the principal is set for the route. */
export function requireApiKey(ctx: Ctx, except: readonly string[] = []): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!except.includes(c.req.path))
      c.set("principal", authenticate(ctx, c.req.header("authorization"), clientAddress(c), c.req.raw));
    await next();
  };
}
