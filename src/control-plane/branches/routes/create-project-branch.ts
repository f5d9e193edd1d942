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
import { Operation } from "../../operations/schema.js";
import { Database, Role } from "../../roles-databases/schema.js";
import { ProjectParams } from "../../schema.js";
import { Branch, BranchCreateRequest } from "../schema.js";
import { checkBranchCreate, copyParentNow, createBranch } from "../service.js";

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
  await checkBranchCreate(ctx, principal.accountId, projectId, input);
  const created = publish(c, createBranch(ctx, principal.accountId, projectId, input));
  return c.json(await copyParentNow(ctx, created), 201);
});
