import type { Ctx } from "../../context.js";
import { badRequest, notFound } from "../../errors.js";
import { requireBranch, requireProject } from "../access.js";
import { findDefaultBranch } from "../branches/store.js";
import { findBranchReadWrite, findProjectEndpoint } from "../endpoints/store.js";
import { findDatabase, findRole } from "../roles-databases/store.js";
import { connectionUri, knownPassword } from "./render.js";
import type { ConnectionUriInput } from "./schema.js";

/** GET /projects/{p}/connection_uri: the branch's read_write endpoint unless one is named. */
export function getConnectionUri(ctx: Ctx, accountId: string, projectId: string, q: ConnectionUriInput) {
  const db = ctx.db;
  requireProject(db, accountId, projectId);
  const branch = q.branch_id
    ? requireBranch(db, accountId, projectId, q.branch_id)
    : findDefaultBranch(db, projectId);
  if (!branch) throw notFound(`project ${projectId} has no default branch`);
  const endpoint = q.endpoint_id
    ? findProjectEndpoint(db, projectId, q.endpoint_id)
    : findBranchReadWrite(db, branch.id);
  if (!endpoint)
    throw q.endpoint_id
      ? notFound(`endpoint ${q.endpoint_id} not found in project ${projectId}`)
      : notFound(`branch ${branch.id} has no read_write endpoint; create one or pass endpoint_id`);
  if (endpoint.branchId !== branch.id)
    throw badRequest(`endpoint ${endpoint.id} does not belong to branch ${branch.id}`);
  const role = findRole(db, branch.id, q.role_name);
  if (!role) throw notFound(`role ${q.role_name} not found on branch ${branch.id}`);
  const database = findDatabase(db, branch.id, q.database_name);
  if (!database) throw notFound(`database ${q.database_name} not found on branch ${branch.id}`);
  return {
    uri: connectionUri(
      role.name,
      knownPassword(role),
      endpoint,
      database.name,
      q.pooled ?? false,
      ctx.config.frontDoor,
    ),
  };
}
