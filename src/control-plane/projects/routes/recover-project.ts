import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, security } from "../../../http/router.js";
import { Branch } from "../../branches/schema.js";
import { ProjectParams } from "../../schema.js";
import { Project } from "../schema.js";
import { recoverProject } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/recover",
  operationId: "recoverProject",
  tags: ["Project"],
  summary:
    "Recover a deleted project within its recovery window (7 days unless NEON_EMULATOR_PROJECT_RECOVERY_SECONDS says otherwise): its branches, computes (stopped), roles, databases and data come back",
  security,
  request: { params: ProjectParams },
  responses: {
    200: jsonResponse(
      z.object({ project: Project, branches: z.array(Branch) }),
      "The recovered project and its branches",
    ),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(recoverProject(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id), 200),
);
