import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Operation } from "../../operations/schema.js";
import { BranchParams } from "../../schema.js";
import { Snapshot, SnapshotCreateQuery } from "../schema.js";
import { createSnapshot } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/branches/{branch_id}/snapshot",
  operationId: "createSnapshot",
  tags: ["Snapshot"],
  summary:
    "Take a snapshot of the branch's data (a consistent copy, with its roles and databases): as it is now, or at an lsn or timestamp of its history",
  security,
  request: { params: BranchParams, query: SnapshotCreateQuery },
  responses: {
    200: jsonResponse(z.object({ snapshot: Snapshot, operations: z.array(Operation) }), "The snapshot"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, async (c) => {
  const p = c.req.valid("param");
  const body = await createSnapshot(
    c.var.ctx,
    c.var.principal.accountId,
    p.project_id,
    p.branch_id,
    c.req.valid("query"),
  );
  return c.json(body, 200);
});
