import { createRoute, z } from "@hono/zod-openapi";
import type { EmulatorHooks } from "../../app.js";
import { OPERATION_ACTIONS } from "../../domain/operations.js";
import { iso } from "../../lib/clock.js";
import { ApiError } from "../../lib/errors.js";
import {
  armFault,
  clearFaults,
  createIsolatedAccount,
  listFaults,
  resetAccount,
} from "../../repos/emulator.js";
import { connectEndpoint } from "../../repos/endpoints.js";
import { createRouter, EndpointParams, errorResponses, jsonBody, jsonResponse, security } from "../router.js";
import { ApiKeyCreateResponse, EndpointOperations } from "../schemas.js";

/** Emulator-only routes (never under /api/v2). All but health need an API key. */
const common = { tags: ["Emulator"], security };

const health = createRoute({
  tags: ["Emulator"],
  method: "get",
  path: "/health",
  summary: "200 once the database is migrated and the server listens (no auth)",
  responses: { 200: jsonResponse(z.object({ status: z.literal("ok") }), "Ready") },
});

const Clock = z.object({ mode: z.enum(["real", "manual"]), now: z.string() });

const getClock = createRoute({
  ...common,
  method: "get",
  path: "/clock",
  summary: "The emulator's clock mode and current time",
  responses: { 200: jsonResponse(Clock, "The clock"), ...errorResponses },
});

const advance = createRoute({
  ...common,
  method: "post",
  path: "/clock/advance",
  summary: "Manual clock: move time forward and run everything that becomes due",
  request: {
    body: jsonBody(
      z.object({
        seconds: z
          .number({ message: "must be a number of seconds" })
          .positive("must be greater than 0")
          .max(366 * 86_400, "must be at most one year (31622400 seconds) per call"),
      }),
    ),
  },
  responses: { 200: jsonResponse(Clock, "The new time"), ...errorResponses },
});

const connect = createRoute({
  ...common,
  method: "post",
  path: "/projects/{project_id}/endpoints/{endpoint_id}/connect",
  summary: "Simulate a client connection: wakes an idle endpoint, refreshes last_active of an active one",
  request: { params: EndpointParams },
  responses: {
    200: jsonResponse(EndpointOperations, "The endpoint and any operation started"),
    ...errorResponses,
  },
});

const Fault = z.object({
  id: z.number().int(),
  action: z.string(),
  project_id: z.string().optional(),
  endpoint_id: z.string().optional(),
  remaining: z.number().int(),
  message: z.string(),
  created_at: z.string(),
});

const addFault = createRoute({
  ...common,
  method: "post",
  path: "/faults",
  summary: "Make the next `count` operations of `action` fail (optionally in one project or endpoint)",
  request: {
    body: jsonBody(
      z.object({
        action: z.enum(OPERATION_ACTIONS),
        count: z.number().int().min(1).max(10_000).optional(),
        project_id: z.string().optional(),
        endpoint_id: z.string().optional(),
        message: z.string().min(1).max(1000).optional(),
      }),
    ),
  },
  responses: { 201: jsonResponse(z.object({ fault: Fault }), "The armed fault"), ...errorResponses },
});

const getFaults = createRoute({
  ...common,
  method: "get",
  path: "/faults",
  summary: "List armed faults",
  responses: { 200: jsonResponse(z.object({ faults: z.array(Fault) }), "Armed faults"), ...errorResponses },
});

const deleteFaults = createRoute({
  ...common,
  method: "delete",
  path: "/faults",
  summary: "Clear all armed faults of the account",
  responses: {
    200: jsonResponse(z.object({ cleared: z.number().int() }), "How many were cleared"),
    ...errorResponses,
  },
});

const reset = createRoute({
  ...common,
  method: "post",
  path: "/reset",
  summary: "Empty the caller's account (projects and all under them); keys stay unless revoke_other_keys",
  request: { body: jsonBody(z.object({ revoke_other_keys: z.boolean().optional() }), false) },
  responses: {
    200: jsonResponse(
      z.object({ deleted_projects: z.number().int(), revoked_keys: z.number().int() }),
      "What was removed",
    ),
    ...errorResponses,
  },
});

const accounts = createRoute({
  ...common,
  method: "post",
  path: "/accounts",
  summary: "Create a new, empty account; its first key is shown once",
  request: {
    body: jsonBody(
      z.object({
        name: z.string().min(1).max(256).optional(),
        email: z.email().optional(),
        plan: z.enum(["paid", "free"]).optional(),
      }),
      false,
    ),
  },
  responses: {
    201: jsonResponse(
      z.object({
        account: z.object({
          id: z.string(),
          org_id: z.string(),
          name: z.string(),
          email: z.string(),
          plan: z.string(),
        }),
        key: ApiKeyCreateResponse,
      }),
      "The new account and its first key",
    ),
    ...errorResponses,
  },
});

export default function emulatorRoutes(hooks: EmulatorHooks | undefined) {
  return createRouter()
    .openapi(health, (c) => c.json({ status: "ok" as const }, 200))
    .openapi(getClock, (c) => c.json({ mode: c.var.ctx.clock.mode, now: iso(c.var.ctx.clock.now()) }, 200))
    .openapi(advance, (c) => {
      if (!hooks) throw new ApiError(409, "CLOCK_NOT_MANUAL", "no worker is attached to this server");
      const now = hooks.advanceClock(c.req.valid("json").seconds);
      return c.json({ mode: c.var.ctx.clock.mode, now: iso(now) }, 200);
    })
    .openapi(connect, (c) => {
      const p = c.req.valid("param");
      return c.json(connectEndpoint(c.var.ctx, c.var.principal.accountId, p.project_id, p.endpoint_id), 200);
    })
    .openapi(addFault, (c) =>
      c.json(armFault(c.var.ctx, c.var.principal.accountId, c.req.valid("json")), 201),
    )
    .openapi(getFaults, (c) => c.json(listFaults(c.var.ctx, c.var.principal.accountId), 200))
    .openapi(deleteFaults, (c) => c.json(clearFaults(c.var.ctx, c.var.principal.accountId), 200))
    .openapi(reset, (c) =>
      c.json(
        resetAccount(c.var.ctx, c.var.principal.accountId, c.var.principal.keyId, c.req.valid("json")),
        200,
      ),
    )
    .openapi(accounts, (c) => c.json(createIsolatedAccount(c.var.ctx, c.req.valid("json")), 201));
}
