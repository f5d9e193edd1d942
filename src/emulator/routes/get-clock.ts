import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../http/router.js";
import { iso } from "../../platform/clock.js";
import { Clock } from "../schema.js";

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "get",
  path: "/clock",
  summary: "The clock mode and the caller's account's current time (each account has its own in manual mode)",
  responses: { 200: jsonResponse(Clock, "The clock"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json({ mode: c.var.ctx.clock.mode, now: iso(c.var.ctx.clock.now(c.var.principal.accountId)) }, 200),
);
