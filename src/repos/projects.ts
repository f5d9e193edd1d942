import { and, asc, eq, gt, or, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { projects } from "../db/schema/index.js";
import { computeLimitsProblem, FREE_PLAN_CU } from "../domain/compute.js";
import { DEFAULT_REGION, proxyHost, REGION_IDS } from "../domain/regions.js";
import { badRequest, locked, notFound, unprocessable } from "../lib/errors.js";
import { prepared } from "../lib/prepared.js";
import { toBranchJson } from "../views/branches.js";
import { toEndpointJson } from "../views/endpoints.js";
import { toProjectJson, toProjectListItem } from "../views/projects.js";
import { toDatabaseJson, toRoleJson } from "../views/roles-databases.js";
import { type AccountRow, getAccount } from "./accounts.js";
import { findDefaultBranch, insertBranch } from "./branches.js";
import { connectionDetails } from "./connection.js";
import { insertEndpoint } from "./endpoints.js";
import { deleteProjectOperations, startOperation, toOperationJson } from "./operations.js";
import { insertDatabase, insertRole } from "./roles-databases.js";
import { contains } from "./sql.js";

export type ProjectRow = typeof projects.$inferSelect;

export function findProject(tx: Tx, accountId: string, projectId: string): ProjectRow | undefined {
  return prepared(tx, "projects.find", () =>
    tx
      .select()
      .from(projects)
      .where(
        and(
          eq(projects.id, sql.placeholder("projectId")),
          eq(projects.accountId, sql.placeholder("accountId")),
        ),
      )
      .prepare(),
  ).get({ projectId, accountId });
}

/** 404 for a project that does not exist or belongs to another account (never a 403). */
export const projectNotFound = (projectId: string) => notFound(`project ${projectId} not found`);
/** 423 for a change to a locked project, which clients retry. */
export const projectLocked = (projectId: string) => locked(`project ${projectId} is locked; retry later`);

/** The project, if it exists and belongs to the account. */
export function requireProject(tx: Tx, accountId: string, projectId: string): ProjectRow {
  const row = findProject(tx, accountId, projectId);
  if (!row) throw projectNotFound(projectId);
  return row;
}

/** As requireProject, for changes: a locked project answers 423. */
export function requireWritableProject(tx: Tx, accountId: string, projectId: string): ProjectRow {
  const row = requireProject(tx, accountId, projectId);
  if (row.locked) throw projectLocked(projectId);
  return row;
}

export interface DefaultEndpointSettings {
  autoscaling_limit_min_cu?: number | undefined;
  autoscaling_limit_max_cu?: number | undefined;
  suspend_timeout_seconds?: number | undefined;
  pg_settings?: Record<string, string> | undefined;
  pgbouncer_settings?: Record<string, string> | undefined;
}

export interface CreateProjectInput {
  name?: string | undefined;
  region_id?: string | undefined;
  pg_version?: number | undefined;
  provisioner?: string | undefined;
  store_passwords?: boolean | undefined;
  history_retention_seconds?: number | undefined;
  autoscaling_limit_min_cu?: number | undefined;
  autoscaling_limit_max_cu?: number | undefined;
  default_endpoint_settings?: DefaultEndpointSettings | undefined;
  settings?: Record<string, unknown> | undefined;
  org_id?: string | undefined;
  branch?:
    | {
        name?: string | undefined;
        role_name?: string | undefined;
        database_name?: string | undefined;
        annotations?: Record<string, string> | undefined;
      }
    | undefined;
}

/** Validates compute defaults against the plan and the allowed sizes. */
export function checkDefaults(account: AccountRow, settings: DefaultEndpointSettings): void {
  const min = settings.autoscaling_limit_min_cu;
  const max = settings.autoscaling_limit_max_cu;
  if (min !== undefined || max !== undefined) {
    const problem = computeLimitsProblem(min ?? max ?? FREE_PLAN_CU, max ?? min ?? FREE_PLAN_CU);
    if (problem) throw badRequest(`default_endpoint_settings: ${problem}`);
    if (account.plan === "free" && (min !== FREE_PLAN_CU || (max ?? min) !== FREE_PLAN_CU))
      throw unprocessable(`compute is fixed at ${FREE_PLAN_CU} CU on the free plan`);
  }
}

export function createProject(ctx: Ctx, accountId: string, input: CreateProjectInput) {
  const regionId = input.region_id ?? DEFAULT_REGION;
  if (!REGION_IDS.includes(regionId))
    throw badRequest(`region_id "${regionId}" is not a known region; allowed: ${REGION_IDS.join(", ")}`);
  const defaults: DefaultEndpointSettings = { ...(input.default_endpoint_settings ?? {}) };
  if (input.autoscaling_limit_min_cu !== undefined)
    defaults.autoscaling_limit_min_cu = input.autoscaling_limit_min_cu;
  if (input.autoscaling_limit_max_cu !== undefined)
    defaults.autoscaling_limit_max_cu = input.autoscaling_limit_max_cu;

  const result = ctx.db.transaction((tx) => {
    const account = getAccount(tx, accountId);
    if (input.org_id !== undefined && input.org_id !== account.orgId)
      throw notFound(`organization ${input.org_id} not found`);
    checkDefaults(account, defaults);
    const now = ctx.clock.now();
    const id = ctx.ids.projectId();
    const project: ProjectRow = {
      id,
      accountId,
      name: input.name ?? id,
      regionId,
      pgVersion: input.pg_version ?? 17,
      platformId: regionId.split("-")[0] as string,
      provisioner: input.provisioner ?? "k8s-neonvm",
      proxyHost: proxyHost(regionId, ctx.config.domain),
      cpuUsedSec: 0,
      branchLogicalSizeLimit: account.plan === "free" ? 512 : 5_242_880,
      historyRetentionSeconds: input.history_retention_seconds ?? 86_400,
      storePasswords: input.store_passwords ?? true,
      locked: false,
      creationSource: "console",
      defaultEndpointSettings: { ...defaults },
      settings: input.settings ?? {},
      computeLastActiveAt: null,
      createdAt: now,
      updatedAt: now,
    };
    tx.insert(projects).values(project).run();
    const branch = insertBranch(ctx, tx, project, {
      name: input.branch?.name ?? "main",
      parentId: null,
      isDefault: true,
      annotations: input.branch?.annotations,
    });
    const timeline = startOperation(ctx, tx, {
      accountId,
      projectId: id,
      branchId: branch.id,
      action: "create_timeline",
    });
    const role = insertRole(ctx, tx, branch, { name: input.branch?.role_name ?? "neondb_owner" });
    const database = insertDatabase(ctx, tx, branch, {
      name: input.branch?.database_name ?? "neondb",
      ownerName: role.name,
    });
    const started = insertEndpoint(ctx, tx, account, project, branch, { type: "read_write" });
    return { account, project, branch, timeline, role, database, started };
  });
  ctx.notify();
  const { account, project, branch, timeline, role, database, started } = result;
  return {
    project: toProjectJson(project, account, ctx.clock.now()),
    connection_uris: [connectionDetails(role, started.endpoint, database.name)],
    roles: [toRoleJson(role, { withPassword: true })],
    databases: [toDatabaseJson(database)],
    operations: [toOperationJson(timeline), ...started.operations.map(toOperationJson)],
    branch: toBranchJson(branch),
    endpoints: [toEndpointJson(started.endpoint, { withPending: true })],
  };
}

export function listProjects(
  ctx: Ctx,
  accountId: string,
  query: {
    limit?: number | undefined;
    cursor?: string | undefined;
    search?: string | undefined;
    org_id?: string | undefined;
  },
) {
  const account = getAccount(ctx.db, accountId);
  const limit = query.limit ?? 10;
  if (query.org_id !== undefined && query.org_id !== account.orgId)
    return { projects: [], applications: {}, integrations: {} };
  let after: ProjectRow | undefined;
  if (query.cursor !== undefined) {
    after = findProject(ctx.db, accountId, query.cursor);
    if (!after)
      throw badRequest(`cursor "${query.cursor}" is not a project of this account (use pagination.cursor)`);
  }
  const rows = ctx.db
    .select()
    .from(projects)
    .where(
      and(
        eq(projects.accountId, accountId),
        query.search
          ? or(contains(projects.name, query.search), contains(projects.id, query.search))
          : undefined,
        after
          ? or(
              gt(projects.createdAt, after.createdAt),
              and(eq(projects.createdAt, after.createdAt), gt(projects.id, after.id)),
            )
          : undefined,
      ),
    )
    .orderBy(asc(projects.createdAt), asc(projects.id))
    .limit(limit + 1)
    .all();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    projects: page.map((p) => toProjectListItem(p, account)),
    ...(last && rows.length > limit ? { pagination: { cursor: last.id } } : {}),
    applications: {},
    integrations: {},
  };
}

export function getProject(ctx: Ctx, accountId: string, projectId: string) {
  const project = requireProject(ctx.db, accountId, projectId);
  return { project: toProjectJson(project, getAccount(ctx.db, accountId), ctx.clock.now()) };
}

export interface UpdateProjectInput {
  name?: string | undefined;
  settings?: Record<string, unknown> | undefined;
  default_endpoint_settings?: DefaultEndpointSettings | undefined;
  history_retention_seconds?: number | undefined;
}

export function updateProject(ctx: Ctx, accountId: string, projectId: string, input: UpdateProjectInput) {
  const out = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const account = getAccount(tx, accountId);
    const defaults = input.default_endpoint_settings
      ? { ...project.defaultEndpointSettings, ...input.default_endpoint_settings }
      : project.defaultEndpointSettings;
    checkDefaults(account, defaults as DefaultEndpointSettings);
    const now = ctx.clock.now();
    const next: ProjectRow = {
      ...project,
      name: input.name ?? project.name,
      settings: input.settings ? { ...project.settings, ...input.settings } : project.settings,
      defaultEndpointSettings: defaults,
      historyRetentionSeconds: input.history_retention_seconds ?? project.historyRetentionSeconds,
      updatedAt: now,
    };
    tx.update(projects).set(next).where(eq(projects.id, projectId)).run();
    const ops = [];
    // Only a change of the history retention period touches storage configuration.
    if (next.historyRetentionSeconds !== project.historyRetentionSeconds) {
      const defaultBranch = findDefaultBranch(tx, projectId);
      ops.push(
        startOperation(ctx, tx, {
          accountId,
          projectId,
          branchId: defaultBranch?.id ?? null,
          action: "apply_storage_config",
        }),
      );
    }
    return { project: toProjectJson(next, account, now), operations: ops.map(toOperationJson) };
  });
  ctx.notify();
  return out;
}

/** Deletes the project and everything in it; the stored data goes through a delete_tenant operation. */
export function deleteProject(ctx: Ctx, accountId: string, projectId: string) {
  const out = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const account = getAccount(tx, accountId);
    const op = startOperation(ctx, tx, { accountId, projectId, branchId: null, action: "delete_tenant" });
    deleteProjectOperations(tx, projectId, op.id);
    tx.delete(projects).where(eq(projects.id, projectId)).run();
    return { project: toProjectJson(project, account, ctx.clock.now()) };
  });
  ctx.notify();
  return out;
}
