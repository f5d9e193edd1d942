import { createRoute } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { RestoredSnapshot, SnapshotParams, SnapshotRestoreQuery, SnapshotRestoreRequest } from "../schema.js";
import { restoreSnapshot } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/snapshots/{snapshot_id}/restore",
  operationId: "restoreSnapshot",
  tags: ["Snapshot"],
  summary:
    "Restore a snapshot to a new branch (a child of target_branch_id, or of the snapshot's source); finalize_restore makes it replace that branch at once",
  security,
  request: {
    params: SnapshotParams,
    query: SnapshotRestoreQuery,
    body: jsonBody(SnapshotRestoreRequest, false),
  },
  responses: { 200: jsonResponse(RestoredSnapshot, "The new branch and its operations"), ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const p = c.req.valid("param");
  const input = { ...(c.req.valid("json") ?? {}), legacyName: c.req.valid("query").name };
  return c.json(
    publish(c, restoreSnapshot(c.var.ctx, c.var.principal.accountId, p.project_id, p.snapshot_id, input)),
    200,
  );
});
