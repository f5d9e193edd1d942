import { createRoute, z } from "@hono/zod-openapi";
import { signInLink } from "../../console/sessions.js";
import { forbidden } from "../../errors.js";
import { createRouter, errorResponses, jsonResponse, security } from "../../http/router.js";
import { iso, RealClock } from "../../platform/clock.js";

/** Console sessions run on wall time, whatever the emulator's clock. */
const wallClock = new RealClock();

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "post",
  path: "/console/sign-in-link",
  summary:
    "A one-time link that signs a browser in to the web console as the key's account (valid for a day)",
  responses: {
    200: jsonResponse(z.object({ url: z.string(), expires_at: z.string() }), "The sign-in link"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const { accountId, projectId } = c.var.principal;
  // The console shows the whole account: a key made for one project cannot open it.
  if (projectId !== null)
    throw forbidden(`this key is scoped to project ${projectId}; the console needs an account-wide key`);
  const link = signInLink(c.var.ctx.db, accountId, new URL(c.req.url).origin, wallClock.now(null));
  return c.json({ url: link.url, expires_at: iso(link.expiresAt) }, 200);
});
