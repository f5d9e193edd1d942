import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { RateLimiter } from "../platform/rate-limiter.js";
import type { AppEnv } from "./app-env.js";
import { errorResponse } from "./errors.js";

/**
 * NEON_EMULATOR_RATE_LIMIT=neon: an authenticated request beyond its account's limits is answered
 * 429 with the public error body and Retry-After (seconds), as Neon's API answers, so clients can
 * test their retry logic. A route is its template (`GET /api/v2/projects/:project_id`), not its URL.
 */
export function rateLimit(limiter: RateLimiter): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const route = matchedRoutes(c)
      .filter((r) => r.method !== "ALL")
      .at(-1);
    const decision = limiter.take(
      c.get("principal").accountId,
      route ? `${route.method} ${route.path}` : "unmatched",
    );
    if (!decision.allowed)
      return errorResponse(c, "TOO_MANY_REQUESTS", `rate limit exceeded: ${decision.reason}`, {
        "Retry-After": String(decision.retryAfterSeconds),
      });
    await next();
  };
}
