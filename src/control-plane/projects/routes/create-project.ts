import { createRoute, z } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { Branch } from "../../branches/schema.js";
import { ConnectionDetails } from "../../connection/schema.js";
import { Endpoint } from "../../endpoints/schema.js";
import { requireSettingsTaken } from "../../endpoints/service.js";
import { Operation } from "../../operations/schema.js";
import { Database, Role } from "../../roles-databases/schema.js";
import { DEFAULT_PG_VERSION } from "../rules.js";
import { Project, ProjectCreateRequest } from "../schema.js";
import { createProject } from "../service.js";

const CreatedProject = z.object({
  project: Project,
  connection_uris: z.array(ConnectionDetails),
  roles: z.array(Role),
  databases: z.array(Database),
  operations: z.array(Operation),
  branch: Branch,
  endpoints: z.array(Endpoint),
});

const route = createRoute({
  method: "post",
  path: "/projects",
  operationId: "createProject",
  tags: ["Project"],
  summary: "Create a project with its default branch, an owner role, a database and a read_write endpoint",
  security,
  request: { body: jsonBody(ProjectCreateRequest) },
  responses: {
    201: jsonResponse(CreatedProject, "The created project and everything created with it"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, async (c) => {
  const input = c.req.valid("json").project;
  await requireSettingsTaken(c.var.ctx, input.pg_version ?? DEFAULT_PG_VERSION, [
    input.default_endpoint_settings?.pg_settings,
  ]);
  return c.json(publish(c, createProject(c.var.ctx, c.var.principal.accountId, input)), 201);
});
