import { createRoute, z } from "@hono/zod-openapi";
import {
  createDatabase,
  deleteDatabase,
  getDatabase,
  listDatabases,
  updateDatabase,
} from "../../repos/roles-databases.js";
import {
  BranchParams,
  createRouter,
  DatabaseParams,
  errorResponses,
  jsonBody,
  jsonResponse,
  security,
} from "../router.js";
import { Database, DatabaseCreateRequest, DatabaseUpdateRequest, Operation } from "../schemas.js";

const base = "/projects/{project_id}/branches/{branch_id}/databases";
const DatabaseOperations = z.object({ database: Database, operations: z.array(Operation) });
const common = { tags: ["Database"], security };

const list = createRoute({
  ...common,
  method: "get",
  path: base,
  operationId: "listProjectBranchDatabases",
  summary: "List a branch's databases",
  request: { params: BranchParams },
  responses: {
    200: jsonResponse(z.object({ databases: z.array(Database) }), "The databases"),
    ...errorResponses,
  },
});

const create = createRoute({
  ...common,
  method: "post",
  path: base,
  operationId: "createProjectBranchDatabase",
  summary: "Create a database owned by an existing role (apply_config)",
  request: { params: BranchParams, body: jsonBody(DatabaseCreateRequest) },
  responses: { 201: jsonResponse(DatabaseOperations, "The new database"), ...errorResponses },
});

const get = createRoute({
  ...common,
  method: "get",
  path: `${base}/{database_name}`,
  operationId: "getProjectBranchDatabase",
  summary: "Get a database",
  request: { params: DatabaseParams },
  responses: { 200: jsonResponse(z.object({ database: Database }), "The database"), ...errorResponses },
});

const update = createRoute({
  ...common,
  method: "patch",
  path: `${base}/{database_name}`,
  operationId: "updateProjectBranchDatabase",
  summary: "Rename a database or change its owner (apply_config)",
  request: { params: DatabaseParams, body: jsonBody(DatabaseUpdateRequest) },
  responses: { 200: jsonResponse(DatabaseOperations, "The updated database"), ...errorResponses },
});

const del = createRoute({
  ...common,
  method: "delete",
  path: `${base}/{database_name}`,
  operationId: "deleteProjectBranchDatabase",
  summary: "Delete a database (apply_config)",
  request: { params: DatabaseParams },
  responses: { 200: jsonResponse(DatabaseOperations, "The deleted database"), ...errorResponses },
});

export default createRouter()
  .openapi(list, (c) => {
    const p = c.req.valid("param");
    return c.json(listDatabases(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id), 200);
  })
  .openapi(create, (c) => {
    const p = c.req.valid("param");
    return c.json(
      createDatabase(
        c.var.ctx,
        c.var.principal.accountId,
        p.project_id,
        p.branch_id,
        c.req.valid("json").database,
      ),
      201,
    );
  })
  .openapi(get, (c) => {
    const p = c.req.valid("param");
    return c.json(
      getDatabase(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.database_name),
      200,
    );
  })
  .openapi(update, (c) => {
    const p = c.req.valid("param");
    return c.json(
      updateDatabase(
        c.var.ctx,
        c.var.principal.accountId,
        p.project_id,
        p.branch_id,
        p.database_name,
        c.req.valid("json").database,
      ),
      200,
    );
  })
  .openapi(del, (c) => {
    const p = c.req.valid("param");
    return c.json(
      deleteDatabase(c.var.ctx, c.var.principal.accountId, p.project_id, p.branch_id, p.database_name),
      200,
    );
  });
