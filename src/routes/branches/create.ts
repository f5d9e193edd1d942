import { createRoute, z } from "@hono/zod-openapi";
import { createBranch } from "../../repos/branches.js";
import { createRouter, errorResponses, jsonBody, jsonResponse, ProjectParams, security } from "../router.js";
import {
  Branch,
  BranchCreateRequest,
  ConnectionDetails,
  Database,
  Endpoint,
  Operation,
  Role,
} from "../schemas.js";

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

export default createRouter().openapi(route, (c) =>
  c.json(
    createBranch(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id, c.req.valid("json")),
    201,
  ),
);
