import { diffSchemas } from "../../compute/postgres/schema-dump/index.js";
import type { Ctx } from "../../context.js";
import { badRequest, unprocessable } from "../../errors.js";
import { readBranch, requireBranch } from "../access.js";
import { requireDatabase } from "../roles-databases/service.js";
import type { BranchSchemaCompareInput, BranchSchemaInput } from "./schema.js";

/**
 * A branch's schema (GET …/branches/{b}/schema) and its difference from another branch's
 * (…/compare_schema), read from the branch's real database: what `pg_dump --schema-only` prints.
 */

const POINT_IN_TIME =
  "the emulator keeps no history of a branch's data: a schema is read at the branch's head (omit lsn and timestamp)";

/** The schema of one of a branch's databases, at its head. */
export async function branchSchema(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  query: BranchSchemaInput,
) {
  if (query.lsn !== undefined && query.timestamp !== undefined)
    throw badRequest("lsn and timestamp cannot be specified at the same time");
  if (query.format === "json")
    throw unprocessable("format=json is not served by the emulator; the schema is available as sql");
  return { sql: await readSchema(ctx, accountId, projectId, branchId, query.db_name, query) };
}

/**
 * The unified diff from the base branch's schema (the branch's parent unless `base_branch_id`
 * names another) to the branch's, for one database; empty when they are the same.
 */
export async function compareBranchSchema(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  query: BranchSchemaCompareInput,
) {
  const branch = readBranch(ctx.db, accountId, projectId, branchId);
  const baseId = query.base_branch_id ?? branch.parentId;
  if (!baseId)
    throw badRequest(`branch ${branchId} has no parent: name the branch to compare with in base_branch_id`);
  requireBranch(ctx.db, accountId, projectId, baseId);
  const base = await readSchema(ctx, accountId, projectId, baseId, query.db_name, {
    lsn: query.base_lsn,
    timestamp: query.base_timestamp,
  });
  const target = await readSchema(ctx, accountId, projectId, branchId, query.db_name, query);
  const db = query.db_name;
  return { diff: diffSchemas(base, target, { base: `a/${db}`, target: `b/${db}` }) };
}

async function readSchema(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  database: string,
  at: { lsn?: string | undefined; timestamp?: string | undefined },
): Promise<string> {
  readBranch(ctx.db, accountId, projectId, branchId);
  requireDatabase(ctx.db, branchId, database);
  if (at.lsn !== undefined || at.timestamp !== undefined) throw unprocessable(POINT_IN_TIME);
  if (!ctx.branchData)
    throw unprocessable(
      "branches have no databases to read with NEON_EMULATOR_COMPUTE=none; run the emulator with real computes (NEON_EMULATOR_COMPUTE=postgres)",
    );
  return ctx.branchData.schema(projectId, branchId, database);
}
