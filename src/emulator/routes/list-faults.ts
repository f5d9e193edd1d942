import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../http/router.js";
import { Fault } from "../schema.js";
import { listFaults } from "../service.js";

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "get",
  path: "/faults",
  summary: "List armed faults",
  responses: { 200: jsonResponse(z.object({ faults: z.array(Fault) }), "Armed faults"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(listFaults(c.var.ctx, c.var.principal.accountId), 200),
);
