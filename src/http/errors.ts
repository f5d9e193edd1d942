import { z } from "@hono/zod-openapi";
import type { Context, ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Logger } from "pino";
import { EmulatorError, type ErrorCode } from "../errors.js";
import type { AppEnv } from "./app-env.js";

/** The public error body: `{ code, message, request_id }`. */
export const ErrorBody = z
  .object({ code: z.string(), message: z.string(), request_id: z.string().optional() })
  .openapi("GeneralError");

/** Every error code and its HTTP status: the one place the two meet. */
export const STATUS_OF: Record<ErrorCode, ContentfulStatusCode> = {
  INVALID_REQUEST: 400,
  REQUEST_ABORTED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  STORAGE_NOT_ENABLED: 404,
  AI_GATEWAY_NOT_ENABLED: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  CLOCK_NOT_MANUAL: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  NOT_ACCEPTABLE: 406,
  PRECONDITION_FAILED: 412,
  UNPROCESSABLE: 422,
  PROJECTS_LIMIT_EXCEEDED: 422,
  BRANCHES_LIMIT_EXCEEDED: 422,
  ENDPOINTS_LIMIT_EXCEEDED: 422,
  ACTIVE_TIME_QUOTA_EXCEEDED: 422,
  COMPUTE_TIME_QUOTA_EXCEEDED: 422,
  WRITTEN_DATA_QUOTA_EXCEEDED: 422,
  DATA_TRANSFER_QUOTA_EXCEEDED: 422,
  LOCKED: 423,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_ERROR: 500,
};

/** The errors Hono raises itself (HTTPException), by status. */
const HONO_ERRORS: Partial<Record<number, { code: ErrorCode; message?: string }>> = {
  400: { code: "INVALID_REQUEST" },
  413: { code: "PAYLOAD_TOO_LARGE" },
  415: {
    code: "UNSUPPORTED_MEDIA_TYPE",
    message: "request body must be JSON (Content-Type: application/json)",
  },
};

export function errorBody(
  c: Context<AppEnv>,
  code: ErrorCode,
  message: string,
  extra: Record<string, string> = {},
) {
  return { code, message, ...extra, request_id: c.get("requestId") };
}

/** Answers with the error body and the code's status. */
export function errorResponse(
  c: Context,
  code: ErrorCode,
  message: string,
  headers?: Record<string, string>,
  extra?: Record<string, string>,
) {
  return c.json(errorBody(c as Context<AppEnv>, code, message, extra), STATUS_OF[code], headers);
}

/** The one error handler: every error, thrown from any layer, becomes the Neon error body. */
export function onError(logger: Logger): ErrorHandler<AppEnv> {
  return (err, c) => {
    if (err instanceof EmulatorError) return errorResponse(c, err.code, err.message, undefined, err.extra);
    if (err instanceof HTTPException) {
      const known = HONO_ERRORS[err.status];
      if (known) return errorResponse(c, known.code, known.message ?? (err.message || "bad request"));
      // No other status is raised by the middleware in use; were one added, it stays a client error.
      return errorResponse(
        c,
        err.status < 500 ? "INVALID_REQUEST" : "INTERNAL_ERROR",
        err.message || "bad request",
      );
    }
    if ((err as { code?: string }).code === "ECONNRESET") {
      // The client hung up before its body arrived: nobody hears the answer, and it is no fault
      // of the emulator's, so no error-level log with a stack for each one.
      logger.debug({ requestId: c.get("requestId"), path: c.req.path }, "client aborted the request");
      return errorResponse(c, "REQUEST_ABORTED", "the request was aborted before its body arrived");
    }
    logger.error(
      { err, requestId: c.get("requestId"), method: c.req.method, path: c.req.path },
      "unhandled error",
    );
    return errorResponse(c, "INTERNAL_ERROR", "internal error; see the emulator log for this request id");
  };
}
