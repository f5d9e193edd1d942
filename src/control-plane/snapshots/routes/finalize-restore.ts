import { createRoute, z } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { Operation } from "../../operations/schema.js";
import { BranchParams } from "../../schema.js";
import { FinalizeRestoreRequest } from "../schema.js";
import { finalizeRestore } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/branches/{branch_id}/finalize_restore",
  operationId: "finalizeRestoreBranch",
  tags: ["Branch"],
  summary:
    "A branch restored from a snapshot replaces the branch it was restored for: that branch's computes move to it (restarting), it takes its name, and that branch is renamed",
  security,
  request: { params: BranchParams, body: jsonBody(FinalizeRestoreRequest, false) },
  responses: {
    200: jsonResponse(z.object({ operations: z.array(Operation) }), "The operations"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  const name = c.req.valid("json")?.name;
  return c.json(
    publish(c, finalizeRestore(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, name)),
    200,
  );
});
