import { diffSchemas } from "../../compute/postgres/schema-dump/index.js";
import type { Ctx } from "../../context.js";
import { badRequest, unprocessable } from "../../errors.js";
import { readBranch, requireBranch, requireNotBeingRestored, requireProject } from "../access.js";
import { historyPoint, requireInHistory } from "../branches/history.js";
import { requireDatabase } from "../roles-databases/service.js";
import type { BranchSchemaCompareInput, BranchSchemaInput } from "./schema.js";

/**
 * A branch's schema (GET …/branches/{b}/schema) and its difference from another branch's
 * (…/compare_schema), read from the branch's real database: what `pg_dump --schema-only` prints.
 */

/** The schema of one of a branch's databases, at its head. */
export async function branchSchema(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  branchId: string,
  query: BranchSchemaInput,
) {
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
  // The branch asked about first: a database it lacks is named as its own.
  requireDatabase(ctx.db, branchId, query.db_name);
  const base = await readSchema(
    ctx,
    accountId,
    projectId,
    baseId,
    query.db_name,
    { lsn: query.base_lsn, timestamp: query.base_timestamp },
    { lsn: "base_lsn", timestamp: "base_timestamp" },
  );
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
  names = { lsn: "lsn", timestamp: "timestamp" },
): Promise<string> {
  const project = requireProject(ctx.db, accountId, projectId);
  const branch = requireNotBeingRestored(ctx.db, readBranch(ctx.db, accountId, projectId, branchId));
  requireDatabase(ctx.db, branchId, database);
  // A point of the branch's history: checked as a branch create's parent_lsn/parent_timestamp.
  const { point } = historyPoint(ctx, ctx.db, project, branch, at, names);
  if (!ctx.branchData)
    throw unprocessable(
      "branches have no databases to read with NEON_EMULATOR_COMPUTE=none; run the emulator with real computes (NEON_EMULATOR_COMPUTE=postgres)",
    );
  await requireInHistory(ctx, accountId, projectId, branchId, at, names);
  return ctx.branchData.schema(projectId, branchId, database, point);
}
