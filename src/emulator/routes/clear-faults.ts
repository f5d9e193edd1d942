import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../http/router.js";
import { clearFaults } from "../service.js";

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "delete",
  path: "/faults",
  summary: "Clear all armed faults of the account",
  responses: {
    200: jsonResponse(z.object({ cleared: z.number().int() }), "How many were cleared"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(clearFaults(c.var.ctx, c.var.principal.accountId), 200),
);
