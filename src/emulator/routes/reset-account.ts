import { createRoute, z } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../http/router.js";
import { ResetRequest } from "../schema.js";
import { resetAccount } from "../service.js";

const route = createRoute({
  tags: ["Emulator"],
  security,
  method: "post",
  path: "/reset",
  summary: "Empty the caller's account (projects and all under them); keys stay unless revoke_other_keys",
  request: { body: jsonBody(ResetRequest, false) },
  responses: {
    200: jsonResponse(
      z.object({ deleted_projects: z.number().int(), revoked_keys: z.number().int() }),
      "What was removed",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(
    publish(
      c,
      resetAccount(c.var.ctx, c.var.principal.accountId, c.var.principal.keyId, c.req.valid("json")),
    ),
    200,
  ),
);
