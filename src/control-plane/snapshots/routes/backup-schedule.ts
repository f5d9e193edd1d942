import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, jsonResponse, security } from "../../../http/router.js";
import { BranchParams } from "../../schema.js";
import { BackupSchedule } from "../schema.js";
import { getBackupSchedule, setBackupSchedule } from "../service.js";

const get = createRoute({
  method: "get",
  path: "/projects/{project_id}/branches/{branch_id}/backup_schedule",
  operationId: "getSnapshotSchedule",
  tags: ["Snapshot"],
  summary: "The branch's backup schedule (empty when none is set)",
  security,
  request: { params: BranchParams },
  responses: { 200: jsonResponse(BackupSchedule, "The schedule"), ...errorResponses },
});

const put = createRoute({
  method: "put",
  path: "/projects/{project_id}/branches/{branch_id}/backup_schedule",
  operationId: "setSnapshotSchedule",
  tags: ["Snapshot"],
  summary: "Set the branch's backup schedule (stored; the emulator takes no snapshots on its own)",
  security,
  request: { params: BranchParams, body: jsonBody(BackupSchedule) },
  responses: { 200: jsonResponse(z.object({}), "Stored"), ...errorResponses },
});

export default createRouter()
  .openapi(get, (c) => {
    const p = c.req.valid("param");
    return c.json(getBackupSchedule(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id), 200);
  })
  .openapi(put, (c) => {
    const p = c.req.valid("param");
    return c.json(
      setBackupSchedule(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, c.req.valid("json")),
      200,
    );
  });
