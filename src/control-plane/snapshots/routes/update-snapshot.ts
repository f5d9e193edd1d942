import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { Snapshot, SnapshotParams, SnapshotUpdateRequest } from "../schema.js";
import { updateSnapshot } from "../service.js";

const route = createRoute({
  method: "patch",
  path: "/projects/{project_id}/snapshots/{snapshot_id}",
  operationId: "updateSnapshot",
  tags: ["Snapshot"],
  summary: "Rename a snapshot or change when it expires (null: never)",
  security,
  request: { params: SnapshotParams, body: jsonBody(SnapshotUpdateRequest) },
  responses: { 200: jsonResponse(z.object({ snapshot: Snapshot }), "The snapshot"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  return c.json(
    updateSnapshot(
      c.var.ctx,
      c.var.principal.accountId,
      p.project_id,
      p.snapshot_id,
      c.req.valid("json").snapshot,
    ),
    200,
  );
});
