import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../http/router.js";
import { iso } from "../../platform/clock.js";
import { Clock, ClockAdvanceRequest } from "../schema.js";

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "post",
  path: "/clock/advance",
  summary:
    "Manual clock: move the caller's account's time forward and run everything of that account that becomes due",
  request: {
    body: jsonBody(ClockAdvanceRequest),
  },
  responses: { 200: jsonResponse(Clock, "The new time"), ...errorResponses },
});

export default createRouter().openapi(route, async (c) => {
  const now = await c.var.advanceClock(c.var.principal.accountId, c.req.valid("json").seconds);
  return c.json({ mode: c.var.ctx.clock.mode, now: iso(now) }, 200);
});
