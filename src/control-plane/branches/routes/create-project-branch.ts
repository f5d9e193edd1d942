import { createRoute, z } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { ConnectionDetails } from "../../connection/schema.js";
import { Endpoint } from "../../endpoints/schema.js";
import { projectMajor, requireSettingsTaken } from "../../endpoints/service.js";
import { Operation } from "../../operations/schema.js";
import { Database, Role } from "../../roles-databases/schema.js";
import { ProjectParams } from "../../schema.js";
import { requireInHistory } from "../history.js";
import { Branch, BranchCreateRequest } from "../schema.js";
import { copyParentNow, createBranch } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/branches",
  operationId: "createProjectBranch",
  tags: ["Branch"],
  summary: "Create a branch (parent defaults to the default branch), optionally with endpoints",
  security,
  request: { params: ProjectParams, body: jsonBody(BranchCreateRequest, false) },
  responses: {
    201: jsonResponse(
      z.object({
        branch: Branch,
        endpoints: z.array(Endpoint),
        operations: z.array(Operation),
        roles: z.array(Role),
        databases: z.array(Database),
        connection_uris: z.array(ConnectionDetails).optional(),
      }),
      "The created branch",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, async (c) => {
  const { ctx, principal } = c.var;
  const projectId = c.req.valid("param").project_id;
  const input = c.req.valid("json");
  const at = input.branch;
  await requireInHistory(
    ctx,
    principal.accountId,
    projectId,
    at?.parent_id,
    { lsn: at?.parent_lsn, timestamp: at?.parent_timestamp },
    { lsn: "parent_lsn", timestamp: "parent_timestamp" },
  );
  await requireSettingsTaken(
    ctx,
    projectMajor(ctx, principal.accountId, projectId),
    (input.endpoints ?? []).map((e) => e.settings?.pg_settings),
  );
  const created = publish(c, createBranch(ctx, principal.accountId, projectId, input));
  return c.json(await copyParentNow(ctx, created), 201);
});
