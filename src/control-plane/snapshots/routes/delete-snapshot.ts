import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { Operation } from "../../operations/schema.js";
import { SnapshotParams } from "../schema.js";
import { deleteSnapshot } from "../service.js";

const route = createRoute({
  method: "delete",
  path: "/projects/{project_id}/snapshots/{snapshot_id}",
  operationId: "deleteSnapshot",
  tags: ["Snapshot"],
  summary: "Delete a snapshot and its data",
  security,
  request: { params: SnapshotParams },
  responses: {
    202: jsonResponse(z.object({ operations: z.array(Operation) }), "Deleted"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    publish(c, deleteSnapshot(c.var.ctx, c.var.principal.accountId, p.project_id, p.snapshot_id)),
    202,
  );
});
