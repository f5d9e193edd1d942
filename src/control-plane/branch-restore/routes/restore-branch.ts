import { createRoute } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { requireInHistory } from "../../branches/history.js";
import { BranchParams } from "../../schema.js";
import { BranchOperations, BranchRestoreRequest } from "../schema.js";
import { restoreBranch } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/branches/{branch_id}/restore",
  operationId: "restoreProjectBranch",
  tags: ["Branch"],
  summary:
    "Restore a branch to the head of another branch (its parent for a reset): it keeps its id and computes, takes the source's data, roles and databases; preserve_under_name keeps its previous state as a new branch",
  security,
  request: { params: BranchParams, body: jsonBody(BranchRestoreRequest) },
  responses: {
    200: jsonResponse(BranchOperations, "The restored branch and its operations"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, async (c) => {
  const { ctx, principal } = c.var;
  const p = c.req.valid("param");
  const input = c.req.valid("json");
  await requireInHistory(
    ctx,
    principal.accountId,
    p.project_id,
    input.source_branch_id,
    { lsn: input.source_lsn, timestamp: input.source_timestamp },
    { lsn: "source_lsn", timestamp: "source_timestamp" },
  );
  return c.json(publish(c, restoreBranch(ctx, principal.accountId, p.project_id, p.branch_id, input)), 200);
});
