import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, jsonResponse } from "../../http/router.js";

const route = createRoute({
  tags: ["Emulator"],
  method: "get",
  path: "/health",
  summary: "200 once the database is migrated and the server listens (no auth)",
  responses: { 200: jsonResponse(z.object({ status: z.literal("ok") }), "Ready") },
});

export default createRouter().openapi(route, (c) => c.json({ status: "ok" as const }, 200));
