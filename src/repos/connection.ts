import { and, eq } from "drizzle-orm";
import type { Ctx } from "../context.js";
import { databases, endpoints, roles } from "../db/schema/index.js";
import { badRequest, notFound } from "../lib/errors.js";
import { findDefaultBranch, requireBranch } from "./branches.js";
import { requireProject } from "./projects.js";

export function connectionUri(role: string, password: string, host: string, database: string): string {
  return `postgresql://${encodeURIComponent(role)}:${encodeURIComponent(password)}@${host}/${encodeURIComponent(database)}?sslmode=require`;
}

/** The pooled host of an endpoint: its host with `-pooler` right after the endpoint id. */
export function poolerHost(endpoint: { id: string; host: string }): string {
  return endpoint.host.replace(endpoint.id, `${endpoint.id}-pooler`);
}

/** One `connection_uris` entry, as project and branch creation answer it. */
export function connectionDetails(
  role: { name: string; password: string },
  endpoint: { id: string; host: string },
  database: string,
) {
  return {
    connection_uri: connectionUri(role.name, role.password, endpoint.host, database),
    connection_parameters: {
      database,
      password: role.password,
      role: role.name,
      host: endpoint.host,
      pooler_host: poolerHost(endpoint),
    },
  };
}

/** GET /projects/{p}/connection_uri: the branch's read_write endpoint unless one is named. */
export function getConnectionUri(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  q: {
    branch_id?: string | undefined;
    endpoint_id?: string | undefined;
    database_name: string;
    role_name: string;
    pooled?: boolean | undefined;
  },
) {
  const db = ctx.db;
  requireProject(db, accountId, projectId);
  const branch = q.branch_id
    ? requireBranch(db, accountId, projectId, q.branch_id)
    : findDefaultBranch(db, projectId);
  if (!branch) throw notFound(`project ${projectId} has no default branch`);
  const endpoint = q.endpoint_id
    ? db
        .select()
        .from(endpoints)
        .where(and(eq(endpoints.id, q.endpoint_id), eq(endpoints.projectId, projectId)))
        .get()
    : db
        .select()
        .from(endpoints)
        .where(and(eq(endpoints.branchId, branch.id), eq(endpoints.type, "read_write")))
        .get();
  if (!endpoint)
    throw q.endpoint_id
      ? notFound(`endpoint ${q.endpoint_id} not found in project ${projectId}`)
      : notFound(`branch ${branch.id} has no read_write endpoint; create one or pass endpoint_id`);
  if (endpoint.branchId !== branch.id)
    throw badRequest(`endpoint ${endpoint.id} does not belong to branch ${branch.id}`);
  const role = db
    .select()
    .from(roles)
    .where(and(eq(roles.branchId, branch.id), eq(roles.name, q.role_name)))
    .get();
  if (!role) throw notFound(`role ${q.role_name} not found on branch ${branch.id}`);
  const database = db
    .select()
    .from(databases)
    .where(and(eq(databases.branchId, branch.id), eq(databases.name, q.database_name)))
    .get();
  if (!database) throw notFound(`database ${q.database_name} not found on branch ${branch.id}`);
  const host = q.pooled ? poolerHost(endpoint) : endpoint.host;
  return { uri: connectionUri(role.name, role.password, host, database.name) };
}
