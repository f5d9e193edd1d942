import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../http/router.js";
import { Fault, FaultCreateRequest } from "../schema.js";
import { armFault } from "../service.js";

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "post",
  path: "/faults",
  summary: "Make the next `count` operations of `action` fail (optionally in one project or endpoint)",
  request: {
    body: jsonBody(FaultCreateRequest),
  },
  responses: { 201: jsonResponse(z.object({ fault: Fault }), "The armed fault"), ...errorResponses },
});

export default createRouter().openapi(route, (c) =>
  c.json(armFault(c.var.ctx, c.var.principal.accountId, c.req.valid("json")), 201),
);
