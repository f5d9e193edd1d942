import { z } from "@hono/zod-openapi";
import { Operation } from "../operations/schema.js";
import { BranchParams, DatabaseName, PgName, RoleName, Timestamp } from "../schema.js";

export const Role = z
  .object({
    branch_id: z.string(),
    name: z.string(),
    password: z.string().optional(),
    protected: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Role");

export const RoleCreateRequest = z
  .object({ role: z.object({ name: RoleName, no_login: z.boolean().optional() }) })
  .openapi("RoleCreateRequest");

export const Database = z
  .object({
    id: z.number().int(),
    branch_id: z.string(),
    name: z.string(),
    owner_name: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Database");

export const DatabaseCreateRequest = z
  .object({ database: z.object({ name: DatabaseName, owner_name: PgName }) })
  .openapi("DatabaseCreateRequest");
export const DatabaseUpdateRequest = z
  .object({ database: z.object({ name: DatabaseName.optional(), owner_name: PgName.optional() }) })
  .openapi("DatabaseUpdateRequest");

export const RoleParams = BranchParams.extend({
  role_name: z.string().openapi({ param: { name: "role_name", in: "path" } }),
});
export const DatabaseParams = BranchParams.extend({
  database_name: z.string().openapi({ param: { name: "database_name", in: "path" } }),
});

export type RoleCreateInput = z.infer<typeof RoleCreateRequest>["role"];
export type DatabaseCreateInput = z.infer<typeof DatabaseCreateRequest>["database"];
export type DatabaseUpdateInput = z.infer<typeof DatabaseUpdateRequest>["database"];

export const RoleOperations = z.object({ role: Role, operations: z.array(Operation) });
export const DatabaseOperations = z.object({ database: Database, operations: z.array(Operation) });
