import type { Ctx } from "../../context.js";
import { EmulatorError, type ErrorCode, notFound } from "../../errors.js";
import { requireBranch, requireProject } from "../access.js";
import { findDatabase } from "../roles-databases/store.js";
import { ENABLING, PRODUCT_NAMES, type ProductRoute } from "./catalog.js";

export interface ProductTarget {
  project_id?: string | undefined;
  branch_id?: string | undefined;
  database_name?: string | undefined;
}

/**
 * Object storage and the AI Gateway answer their reads with their own 404 bodies, whose `reason`
 * says why (`branch_not_found` for an unknown project or branch, as the public document has it).
 */
const OWN_BODIES: Partial<Record<string, { code: ErrorCode; reason: string }>> = {
  getProjectBranchStorage: { code: "STORAGE_NOT_ENABLED", reason: "region_unavailable" },
  getProjectBranchAiGateway: { code: "AI_GATEWAY_NOT_ENABLED", reason: "ai_gateway_unavailable" },
  // Branch logs are region-gated: Neon's answer outside an enabled region.
  queryProjectBranchLogs: { code: "NOT_FOUND", reason: "telemetry_not_enabled" },
  listProjectBranchLogFields: { code: "NOT_FOUND", reason: "telemetry_not_enabled" },
  listProjectBranchLogFieldValues: { code: "NOT_FOUND", reason: "telemetry_not_enabled" },
};

/** Checks what the request names, then answers that the product is not enabled (or not available). */
export function productNotEnabled(
  ctx: Ctx,
  accountId: string,
  route: ProductRoute,
  target: ProductTarget,
): never {
  const own = OWN_BODIES[route.operationId];
  if (!own) return answer(ctx, accountId, route, target);
  try {
    return answer(ctx, accountId, route, target);
  } catch (err) {
    if (!(err instanceof EmulatorError)) throw err;
    const missing = !err.message.includes(" not enabled ");
    if (missing && own.code === "NOT_FOUND") throw err;
    throw new EmulatorError(own.code, err.message, { reason: missing ? "branch_not_found" : own.reason });
  }
}

function answer(ctx: Ctx, accountId: string, route: ProductRoute, target: ProductTarget): never {
  const name = PRODUCT_NAMES[route.product];
  if (target.project_id === undefined) throw notFound(`${name} is not enabled: no project named`);
  requireProject(ctx.db, accountId, target.project_id);
  let where = `project ${target.project_id}`;
  if (target.branch_id !== undefined) {
    requireBranch(ctx.db, accountId, target.project_id, target.branch_id);
    where = `branch ${target.branch_id}`;
    if (target.database_name !== undefined) {
      if (!findDatabase(ctx.db, target.branch_id, target.database_name))
        throw notFound(`database ${target.database_name} not found in branch ${target.branch_id}`);
      where = `database ${target.database_name} on branch ${target.branch_id}`;
    }
  }
  // Neon's CLI recognises this phrase for branch credentials (its other commands: "not enabled").
  if (route.product === "credentials")
    throw notFound(
      `platform credentials not available for ${where}: the emulator runs Postgres computes only`,
    );
  if (ENABLING.has(route.operationId))
    throw notFound(`${name} is not available for ${where}: the emulator runs Postgres computes only`);
  throw notFound(`${name} is not enabled for ${where}`);
}
