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
  let where: string;
  try {
    where = requireTarget(ctx, accountId, route, target);
  } catch (err) {
    // Object storage and the AI Gateway answer an unknown project or branch with their own body too.
    if (own && own.code !== "NOT_FOUND" && err instanceof EmulatorError)
      throw new EmulatorError(own.code, err.message, { reason: "branch_not_found" });
    throw err;
  }
  const message = answerFor(route, where);
  if (own) throw new EmulatorError(own.code, message, { reason: own.reason });
  throw notFound(message);
}

/** Where the request points ("branch br-…", …), once the project, branch and database named exist. */
function requireTarget(ctx: Ctx, accountId: string, route: ProductRoute, target: ProductTarget): string {
  if (target.project_id === undefined)
    throw notFound(`${PRODUCT_NAMES[route.product]} is not enabled: no project named`);
  requireProject(ctx.db, accountId, target.project_id);
  if (target.branch_id === undefined) return `project ${target.project_id}`;
  requireBranch(ctx.db, accountId, target.project_id, target.branch_id);
  if (target.database_name === undefined) return `branch ${target.branch_id}`;
  if (!findDatabase(ctx.db, target.branch_id, target.database_name))
    throw notFound(`database ${target.database_name} not found in branch ${target.branch_id}`);
  return `database ${target.database_name} on branch ${target.branch_id}`;
}

function answerFor(route: ProductRoute, where: string): string {
  // Neon's CLI recognises this phrase for branch credentials (its other commands: "not enabled").
  if (route.product === "credentials")
    return `platform credentials not available for ${where}: the emulator runs Postgres computes only`;
  const name = PRODUCT_NAMES[route.product];
  if (ENABLING.has(route.operationId))
    return `${name} is not available for ${where}: the emulator runs Postgres computes only`;
  return `${name} is not enabled for ${where}`;
}
