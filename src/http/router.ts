import { OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import { badRequest, type EmulatorError } from "../errors.js";
import type { Outcome } from "../platform/events.js";
import type { JsonText } from "../platform/json-text.js";
import type { AppEnv } from "./app-env.js";
import { ErrorBody } from "./errors.js";

export type { AppEnv } from "./app-env.js";

const TARGET_NAMES: Record<string, string> = {
  json: "request body",
  query: "query parameter",
  param: "path parameter",
  header: "header",
  cookie: "cookie",
};

/**
 * Renders a zod failure as one 400 naming every offending field, e.g. `endpoint.type: Invalid
 * option`; a field the input lacks (`input`, when given) is named as required.
 */
export function validationError(target: string, error: z.ZodError, input?: unknown): EmulatorError {
  const where = TARGET_NAMES[target] ?? target;
  const parts = error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    if (!path) return issue.message;
    const missing = input !== undefined && valueAt(input, issue.path) === undefined;
    return `${path}: ${missing ? "required" : issue.message}`;
  });
  return badRequest(`invalid ${where}: ${parts.join("; ")}`);
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/** Answers with JSON text serialized earlier (a cache), typed as the `c.json` of its value would be. */
export function sendJsonText<T, S extends ContentfulStatusCode>(c: Context, text: JsonText<T>, status: S) {
  return c.body(text, status, { "content-type": "application/json" }) as unknown as TypedResponse<
    JSONParsed<T>,
    S,
    "json"
  >;
}

/** Hands a service's events on and returns its answer. */
export function publish<T>(c: Context<AppEnv>, result: Outcome<T>): T {
  if (result.events.length) c.var.events(result.events);
  return result.body;
}

export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      // The validator hands the hook the input it checked as `data` (zod's failure has none).
      if (!result.success)
        throw validationError(result.target, result.error, (result as { data?: unknown }).data);
    },
  });
}

const errorContent = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

/** Error responses shared by every route (spread into each route's `responses`). */
export const errorResponses = {
  400: errorContent("Malformed or invalid input; the message names the field"),
  401: errorContent("Missing, malformed, unknown or revoked API key"),
  404: errorContent("Unknown id, or an object of another account"),
  409: errorContent("Conflicting request"),
  413: errorContent("Request body too large"),
  415: errorContent("Request body is not JSON"),
  422: errorContent("Not allowed by the account's plan"),
  423: errorContent("The project is locked; retry later"),
  500: errorContent("Internal error (a bug: reported with the request id)"),
} as const;

export const jsonBody = <T extends z.ZodType>(schema: T, required = true) => ({
  required,
  content: { "application/json": { schema } },
});

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const security = [{ BearerAuth: [] }];
