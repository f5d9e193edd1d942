import type { Ctx } from "../../context.js";
import { badRequest, conflict, locked, notFound } from "../../errors.js";
import { iso } from "../../platform/clock.js";
import type { Tx } from "../../platform/db.js";
import { operationsStarted } from "../../platform/events.js";
import {
  conflictingOperations,
  findProject,
  type ProjectRow,
  projectNotFound,
  projectRestoring,
  requireProject,
  requireWritableProject,
} from "../access.js";
import { type AccountRow, getAccount } from "../accounts/store.js";
import type { Principal } from "../api-keys/service.js";
import { revokeProjectKeys } from "../api-keys/store.js";
import { toBranchJson } from "../branches/render.js";
import { addBranch } from "../branches/service.js";
import { findDefaultBranch, findProtectedBranch, listProjectBranches } from "../branches/store.js";
import { connectionDetails } from "../connection/render.js";
import { trafficOf } from "../consumption/meter.js";
import { storageByteHours } from "../consumption/service.js";
import { toEndpointJson } from "../endpoints/render.js";
import { addEndpoint, suspendProjectEndpoints } from "../endpoints/service.js";
import { closeActivity, usageByProject, usageOf } from "../endpoints/store.js";
import { quotaUsedUp, requireProjectRoom, withPlan } from "../limits.js";
import { toOperationJson } from "../operations/render.js";
import { startOperation } from "../operations/service.js";
import { deleteProjectOperations, dropPendingDeletion, type OperationRow } from "../operations/store.js";
import { toDatabaseJson, toRoleJson } from "../roles-databases/render.js";
import { addDatabase, addRole, dropWhatDataBrings } from "../roles-databases/service.js";
import { availablePreloadLibraries } from "./preload-libraries.js";
import {
  type DeletedProjectRow,
  findDeletedProject,
  listDeletedProjects,
  stashProject,
  unstashProject,
} from "./recovery-store.js";
import { monthStartOf, toProjectJson, toProjectListItem } from "./render.js";
import {
  checkDefaults,
  checkSettingsChange,
  DEFAULT_BRANCH_NAME,
  DEFAULT_DATABASE_NAME,
  DEFAULT_ROLE_NAME,
  logicalReplication,
  newProjectRow,
} from "./rules.js";
import type {
  DefaultEndpointSettingsInput,
  ProjectCreateInput,
  ProjectListInput,
  ProjectUpdateInput,
} from "./schema.js";
import { deleteProjectRow, insertProject, listProjectRows, updateProjectRow } from "./store.js";

/**
 * POST /projects: the project with its default branch (create_timeline), the owner role, its
 * database and a read_write endpoint (start_compute), in one transaction.
 */
export function createProject(ctx: Ctx, accountId: string, input: ProjectCreateInput) {
  const created = ctx.db.transaction((tx) => {
    const account = getAccount(tx, accountId);
    if (input.org_id !== undefined && input.org_id !== account.orgId)
      throw notFound(`organization ${input.org_id} not found`);
    requireProjectRoom(ctx, tx, accountId, account.plan);
    const project = newProjectRow({
      id: ctx.ids.projectId(),
      accountId,
      plan: account.plan,
      domain: ctx.config.domain,
      now: ctx.clock.now(accountId),
      input,
      postgres: ctx.config.postgres,
    });
    insertProject(tx, project);
    const branch = addBranch(ctx, tx, project, {
      name: input.branch?.name ?? DEFAULT_BRANCH_NAME,
      parentId: null,
      isDefault: true,
      annotations: input.branch?.annotations,
    });
    const timeline = startOperation(ctx, tx, {
      accountId,
      projectId: project.id,
      branchId: branch.id,
      action: "create_timeline",
    });
    const role = addRole(ctx, tx, branch, { name: input.branch?.role_name ?? DEFAULT_ROLE_NAME });
    const database = addDatabase(ctx, tx, branch, {
      name: input.branch?.database_name ?? DEFAULT_DATABASE_NAME,
      ownerName: role.name,
    });
    // Every project's data starts from a template holding the default role and database.
    dropWhatDataBrings(tx, branch);
    const started = addEndpoint(ctx, tx, account.plan, project, branch.id, { type: "read_write" });
    return { account, project, branch, role, database, started, ops: [timeline, ...started.operations] };
  });
  const { account, project, branch, role, database, started, ops } = created;
  return {
    body: {
      project: toProjectJson(project, withPlan(ctx, account), ctx.clock.now(accountId)),
      connection_uris: [connectionDetails(role, started.endpoint, database.name, ctx.config.frontDoor)],
      roles: [toRoleJson(role, { withPassword: true })],
      databases: [toDatabaseJson(database)],
      operations: ops.map(toOperationJson),
      branch: toBranchJson(branch, account.name),
      endpoints: [toEndpointJson(started.endpoint, { withPending: true })],
    },
    events: operationsStarted(ops),
  };
}

/** A page of the key's projects: all of the account's, or the one a project-scoped key sees. */
export function listProjects(ctx: Ctx, principal: Principal, query: ProjectListInput) {
  const { accountId, projectId: scope } = principal;
  const account = getAccount(ctx.db, accountId);
  const limit = query.limit ?? 10;
  if (query.org_id !== undefined && query.org_id !== account.orgId)
    return { projects: [], applications: {}, integrations: {} };
  if (query.recoverable)
    return { ...recoverableProjects(ctx, account, query), applications: {}, integrations: {} };
  let after: ProjectRow | undefined;
  if (query.cursor !== undefined) {
    after = findProject(ctx.db, accountId, query.cursor);
    if (!after)
      throw badRequest(`cursor "${query.cursor}" is not a project of this account (use pagination.cursor)`);
  }
  const rows = listProjectRows(ctx.db, accountId, { search: query.search, after, limit, only: scope });
  return {
    ...projectListPage(ctx, rows, limit, () => account, ctx.clock.now(accountId)),
    applications: {},
    integrations: {},
  };
}

/** GET /projects?recoverable=true: the account's deleted projects still within their recovery window, by deletion time. */
function recoverableProjects(ctx: Ctx, account: AccountRow, query: ProjectListInput) {
  const now = ctx.clock.now(account.id);
  const limit = query.limit ?? 10;
  let after: DeletedProjectRow | undefined;
  if (query.cursor !== undefined) {
    after = findDeletedProject(ctx.db, account.id, query.cursor, now);
    if (!after) throw badRequest(`cursor "${query.cursor}" is not a recoverable project of this account`);
  }
  const rows = listDeletedProjects(ctx.db, account.id, { now, after, limit }).filter(
    (r) => !query.search || r.project.name.includes(query.search) || r.id.includes(query.search),
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    projects: page.map((r) => ({
      ...toProjectListItem(r.project, account),
      deleted_at: iso(r.deletedAt),
      recoverable_until: iso(r.recoverableUntil),
    })),
    ...(last && rows.length > limit ? { pagination: { cursor: last.id } } : {}),
  };
}

/**
 * A page of project list items (GET /projects, /projects/shared) from `limit + 1` rows, with each
 * project's usage and the cursor while more remain.
 */
export function projectListPage(
  ctx: Ctx,
  rows: readonly ProjectRow[],
  limit: number,
  ownerOf: (project: ProjectRow) => AccountRow,
  /** The reader's time (usage figures run up to it). */
  now: number,
) {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const usage = usageByProject(
    ctx.db,
    page.map((p) => p.id),
    now,
  );
  return {
    projects: page.map((p) => toProjectListItem(p, ownerOf(p), usage.get(p.id))),
    ...(last && rows.length > limit ? { pagination: { cursor: last.id } } : {}),
  };
}

export function getProject(ctx: Ctx, accountId: string, projectId: string) {
  const project = requireProject(ctx.db, accountId, projectId);
  const now = ctx.clock.now(accountId);
  return {
    project: toProjectJson(
      project,
      withPlan(ctx, getAccount(ctx.db, accountId)),
      now,
      projectUsage(ctx.db, projectId, now),
    ),
  };
}

export function updateProject(ctx: Ctx, accountId: string, projectId: string, input: ProjectUpdateInput) {
  const { body, ops } = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const account = getAccount(tx, accountId);
    const defaults = input.default_endpoint_settings
      ? { ...project.defaultEndpointSettings, ...input.default_endpoint_settings }
      : project.defaultEndpointSettings;
    checkDefaults(account.plan, defaults as DefaultEndpointSettingsInput);
    if (input.settings) checkSettingsChange(project.settings, input.settings);
    const now = ctx.clock.now(accountId);
    const next: ProjectRow = {
      ...project,
      name: input.name ?? project.name,
      settings: input.settings ? { ...project.settings, ...input.settings } : project.settings,
      defaultEndpointSettings: defaults,
      historyRetentionSeconds: input.history_retention_seconds ?? project.historyRetentionSeconds,
      updatedAt: now,
    };
    updateProjectRow(tx, next);
    const ops: OperationRow[] = [];
    // Only a change of the history retention period touches storage configuration.
    if (next.historyRetentionSeconds !== project.historyRetentionSeconds)
      ops.push(
        startOperation(ctx, tx, {
          accountId,
          projectId,
          branchId: findDefaultBranch(tx, projectId)?.id ?? null,
          action: "apply_storage_config",
        }),
      );
    // Turning logical replication on suspends the running computes (the API's description says
    // so); each starts again with wal_level=logical.
    if (logicalReplication(next.settings) && !logicalReplication(project.settings))
      ops.push(...suspendProjectEndpoints(ctx, tx, projectId));
    // A quota set below what the period has used suspends the computes now, as the worker does
    // when usage reaches it.
    if (input.settings?.quota !== undefined && quotaUsedUp(tx, projectId, now))
      ops.push(...suspendProjectEndpoints(ctx, tx, projectId));
    return {
      body: {
        project: toProjectJson(next, withPlan(ctx, account), now, projectUsage(tx, projectId, now)),
        operations: ops.map(toOperationJson),
      },
      ops,
    };
  });
  return { body, events: operationsStarted(ops) };
}

/**
 * Deletes the project: its rows leave every table (so nothing finds it any more) for the recovery
 * window, during which POST /projects/{p}/recover brings them back; its computes stop and its data
 * folders stay. The delete_tenant operation, due when the window closes, removes the stored data
 * and the project for good. With no window (NEON_EMULATOR_PROJECT_RECOVERY_SECONDS=0) it is due at once.
 */
export function deleteProject(ctx: Ctx, accountId: string, projectId: string) {
  const { body, op } = ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    if (projectRestoring(tx, projectId)) throw conflictingOperations();
    const guarded = findProtectedBranch(tx, projectId);
    if (guarded !== undefined)
      throw conflict(
        `project ${projectId} has protected branch ${guarded} and cannot be deleted; unprotect its branches first`,
      );
    const account = getAccount(tx, accountId);
    const now = ctx.clock.now(accountId);
    const windowMs = ctx.config.projectRecoverySeconds * 1000;
    const op = startOperation(ctx, tx, {
      accountId,
      projectId,
      branchId: null,
      action: "delete_tenant",
      delayMs: windowMs,
    });
    const body = {
      project: toProjectJson(project, withPlan(ctx, account), now, projectUsage(tx, projectId, now)),
    };
    if (windowMs > 0) stashProject(tx, project, now, now + windowMs);
    deleteProjectOperations(tx, projectId, op.id);
    deleteProjectRow(tx, projectId);
    closeActivity(tx, { projectId }, now);
    revokeProjectKeys(tx, projectId, now); // a project's keys die with it
    return { body, op };
  });
  return {
    body,
    events: [...operationsStarted([op]), { type: "project_suspended" as const, projectId }],
  };
}

/**
 * POST /projects/{p}/recover: a deleted project within its recovery window comes back with its
 * branches, computes (stopped), roles, databases, settings and sharing, and its connection
 * strings work again; its pending delete_tenant operation is dropped.
 */
export function recoverProject(ctx: Ctx, accountId: string, projectId: string) {
  return ctx.db.transaction((tx) => {
    const now = ctx.clock.now(accountId);
    if (findProject(tx, accountId, projectId))
      throw conflict(`project ${projectId} is not deleted; only a deleted project can be recovered`);
    const stashed = findDeletedProject(tx, accountId, projectId, now);
    if (!stashed) throw projectNotFound(projectId);
    const account = getAccount(tx, accountId);
    requireProjectRoom(ctx, tx, accountId, account.plan);
    if (!dropPendingDeletion(tx, projectId))
      throw locked(
        "project already has running conflicting operations, scheduling of new ones is prohibited",
      );
    const project = unstashProject(tx, stashed, now);
    return {
      project: toProjectJson(project, withPlan(ctx, account), now, projectUsage(tx, projectId, now)),
      branches: listProjectBranches(tx, projectId).map((b) => toBranchJson(b, account.name)),
    };
  });
}

/** GET /projects/{p}/available_preload_libraries: what the project's Postgres version can preload. */
export function preloadLibraries(ctx: Ctx, accountId: string, projectId: string) {
  return { libraries: availablePreloadLibraries(requireProject(ctx.db, accountId, projectId).pgVersion) };
}

/**
 * A project's compute usage over its lifetime and in the consumption period holding `now`, and
 * its traffic (bytes sent to clients, WAL written) and storage in that period.
 */
function projectUsage(tx: Tx, projectId: string, now: number) {
  return {
    lifetime: usageOf(tx, { projectId }, now),
    period: usageOf(tx, { projectId }, now, monthStartOf(now)),
    traffic: trafficOf(tx, { projectId }, now, monthStartOf(now)),
    storageByteHours: storageByteHours(tx, projectId, monthStartOf(now), now),
  };
}
