import type { Ctx } from "../../context.js";
import { badRequest, conflict } from "../../errors.js";
import { FREE_PLAN_CU, type PlanName } from "../../plans.js";
import type { Tx } from "../../platform/db.js";
import { type DomainEvent, type Outcome, operationsStarted } from "../../platform/events.js";
import { type JsonText, jsonText } from "../../platform/json-text.js";
import { cachedRead } from "../../platform/read-cache.js";
import { connectionOf } from "../../platform/statements.js";
import { VersionedCache } from "../../platform/versioned-cache.js";
import {
  branchNotFound,
  type EndpointRow,
  findBranchById,
  findProject,
  projectLocked,
  projectNotFound,
  readBranch,
  requireBranch,
  requireEndpoint,
  requireProject,
  requireWritableProject,
} from "../access.js";
import { getAccount } from "../accounts/store.js";
import { branchDataPending } from "../branches/store.js";
import { quotaUsedUp, requireComputeRoom, requireQuotaLeft } from "../limits.js";
import { recordSample } from "../monitoring/store.js";
import { toOperationJson } from "../operations/render.js";
import type { OperationAction } from "../operations/rules.js";
import { startOperation } from "../operations/service.js";
import { newestStatus, type OperationRow } from "../operations/store.js";
import { type AllowList, allowList, allows } from "../projects/ip-allow.js";
import type { DefaultEndpointSettingsInput } from "../projects/schema.js";
import { stampComputeActive } from "../projects/store.js";
import { endpointHost, proxyHost } from "../regions/rules.js";
import { toEndpointJson } from "./render.js";
import {
  checkEndpointType,
  checkLimits,
  heading,
  initialState,
  maxConnections,
  readWriteTaken,
  sizedSettingsProblem,
  updateActions,
  VERB_ACTIONS,
  type Verb,
} from "./rules.js";
import type { EndpointCreateInput, EndpointOptions, EndpointUpdateInput } from "./schema.js";
import {
  closeActivity,
  deleteEndpointRow,
  findEndpointById,
  hasReadWrite,
  insertEndpoint,
  listBranchEndpointRows,
  listProjectEndpointRows,
  loginRow,
  type ProjectForEndpoint,
  readCreateContext,
  readEndpointVersion,
  recordActivity,
  recordConnection,
  refreshPendingState,
  resetConnections,
  settledActive,
  updateEndpointRow,
} from "./store.js";

/** What an endpoint create may set: the branch-create options plus the endpoint attributes. */
type NewEndpointInput = EndpointOptions & Partial<Omit<EndpointCreateInput, "branch_id" | "type">>;

function startEndpointOps(ctx: Ctx, tx: Tx, row: EndpointRow, actions: readonly OperationAction[]) {
  return actions.map((action) =>
    startOperation(ctx, tx, {
      accountId: row.accountId,
      projectId: row.projectId,
      branchId: row.branchId,
      endpointId: row.id,
      action,
    }),
  );
}

/**
 * Adds an endpoint and its start_compute operation inside the caller's transaction (a project or
 * branch create, the seed): the plan's rules, the project's defaults, structural rule 1.
 */
export function addEndpoint(
  ctx: Ctx,
  tx: Tx,
  plan: PlanName,
  project: ProjectForEndpoint,
  branchId: string,
  input: NewEndpointInput,
  id = ctx.ids.endpointId(),
): { endpoint: EndpointRow; operations: OperationRow[] } {
  checkEndpointType(plan, input.type);
  requireComputeRoom(ctx, tx, project.id, plan);
  if (input.region_id !== undefined && input.region_id !== project.regionId)
    throw badRequest(`region_id must be the project's region ${project.regionId} (got ${input.region_id})`);
  const defaults = project.defaultEndpointSettings as DefaultEndpointSettingsInput;
  const min = input.autoscaling_limit_min_cu ?? defaults.autoscaling_limit_min_cu ?? FREE_PLAN_CU;
  const defaultMax = defaults.autoscaling_limit_max_cu ?? min;
  const { minCu, maxCu } = checkLimits(
    plan,
    min,
    input.autoscaling_limit_max_cu ?? Math.max(min, defaultMax),
  );
  // Structural rule 1, checked here for a clear message; the partial unique index enforces it regardless.
  if (input.type === "read_write" && hasReadWrite(tx, branchId)) throw conflict(readWriteTaken(branchId));
  const now = ctx.clock.now(project.accountId);
  const disabled = input.disabled ?? false;
  const settings: Record<string, unknown> = { ...(input.settings ?? {}) };
  if (!settings.pg_settings && defaults.pg_settings) settings.pg_settings = defaults.pg_settings;
  if (!settings.pg_settings) settings.pg_settings = {};
  const sized = sizedSettingsProblem(settings, minCu);
  if (sized) throw badRequest(sized);
  const start = initialState(disabled);
  if (start.actions.includes("start_compute")) requireQuotaLeft(tx, project.id, now);
  const row: EndpointRow = {
    id,
    accountId: project.accountId,
    projectId: project.id,
    branchId,
    type: input.type,
    name: input.name ?? null,
    host: endpointHost(id, project.regionId, ctx.config.domain),
    proxyHost: proxyHost(project.regionId, ctx.config.domain),
    regionId: project.regionId,
    provisioner: input.provisioner ?? project.provisioner,
    creationSource: "console",
    minCu,
    maxCu,
    suspendTimeoutSeconds: input.suspend_timeout_seconds ?? defaults.suspend_timeout_seconds ?? 0,
    currentState: start.currentState,
    pendingState: start.pendingState,
    settings,
    poolerEnabled: input.pooler_enabled ?? false,
    poolerMode: input.pooler_mode ?? "transaction",
    disabled,
    passwordlessAccess: input.passwordless_access ?? false,
    openConnections: 0,
    lastActive: null,
    startedAt: null,
    suspendedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  insertEndpoint(tx, row);
  return { endpoint: row, operations: startEndpointOps(ctx, tx, row, start.actions) };
}

/**
 * Refuses (400, in Postgres' own words) `pg_settings` the project's Postgres would not take: an
 * unknown setting, a value of the wrong type or outside its range, one that cannot be changed.
 * Taken, such a value would fail the compute's apply_config and keep it from starting again. Asked
 * of the real binaries (computes real) before anything is written; `major` undefined (a project
 * the account does not have) leaves the answer to the service.
 */
export async function requireSettingsTaken(
  ctx: Ctx,
  major: number | undefined,
  maps: (Record<string, string> | undefined)[],
): Promise<void> {
  if (!ctx.pgSettingsProblem || major === undefined) return;
  for (const map of maps) {
    if (!map || Object.keys(map).length === 0) continue;
    const problem = await ctx.pgSettingsProblem(major, map);
    if (problem) throw badRequest(`pg_settings: ${problem}`);
  }
}

/** The Postgres major of a project the account has. */
export function projectMajor(ctx: Ctx, accountId: string, projectId: string): number | undefined {
  return findProject(ctx.db, accountId, projectId)?.pgVersion;
}

export function createEndpoint(ctx: Ctx, accountId: string, projectId: string, input: EndpointCreateInput) {
  const created = ctx.db.transaction((tx) => {
    const found = readCreateContext(tx, accountId, projectId, input.branch_id);
    // The same answers, in the same order, as requireWritableProject and requireBranch.
    if (!found) throw projectNotFound(projectId);
    if (found.locked) throw projectLocked(projectId);
    if (!found.branchFound) throw branchNotFound(projectId, input.branch_id);
    return addEndpoint(ctx, tx, found.plan, found, input.branch_id, input);
  });
  return {
    body: {
      endpoint: toEndpointJson(created.endpoint, { withPending: true }),
      operations: created.operations.map(toOperationJson),
    },
    events: operationsStarted(created.operations),
  };
}

type EndpointList = { endpoints: ReturnType<typeof toEndpointJson>[] };
const listCache = new VersionedCache<JsonText<EndpointList>>(1000);

/**
 * A project's endpoints, oldest first, as the JSON text of `{"endpoints":[...]}`: kept per
 * project while its endpoint version is unchanged (VersionedCache), and not even that version is
 * read while the database is unchanged (cachedRead; `request` is an object unique to the request).
 */
export function listEndpointsJson(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  request: object,
): JsonText<EndpointList> {
  return cachedRead(
    ctx.db,
    `endpoints:${accountId}:${projectId}`,
    () => {
      const found = readEndpointVersion(ctx.db, accountId, projectId);
      if (!found) throw projectNotFound(projectId);
      return listCache.get(connectionOf(ctx.db), projectId, found.version, () =>
        jsonText({
          endpoints: listProjectEndpointRows(ctx.db, projectId).map((r) =>
            toEndpointJson(r, { withPending: false }),
          ),
        }),
      );
    },
    request,
  );
}

export function listBranchEndpoints(ctx: Ctx, accountId: string, projectId: string, branchId: string) {
  readBranch(ctx.db, accountId, projectId, branchId);
  return {
    endpoints: listBranchEndpointRows(ctx.db, branchId).map((r) => toEndpointJson(r, { withPending: false })),
  };
}

export function getEndpoint(ctx: Ctx, accountId: string, projectId: string, endpointId: string) {
  requireProject(ctx.db, accountId, projectId);
  return {
    endpoint: toEndpointJson(requireEndpoint(ctx.db, accountId, projectId, endpointId), {
      withPending: true,
    }),
  };
}

/** The endpoint as a change left it, with the operations the change started. */
function changed(endpoint: EndpointRow, ops: OperationRow[], extra: DomainEvent[] = []) {
  return {
    body: { endpoint: toEndpointJson(endpoint, { withPending: true }), operations: ops.map(toOperationJson) },
    events: [...operationsStarted(ops), ...extra],
  };
}

export function updateEndpoint(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  endpointId: string,
  input: EndpointUpdateInput,
) {
  const { endpoint, ops } = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const row = requireEndpoint(tx, accountId, projectId, endpointId);
    const plan = getAccount(tx, accountId).plan;
    if (input.region_id !== undefined && input.region_id !== row.regionId)
      throw badRequest(`region_id cannot be changed (endpoint is in ${row.regionId})`);
    const limitsChanged =
      (input.autoscaling_limit_min_cu !== undefined && input.autoscaling_limit_min_cu !== row.minCu) ||
      (input.autoscaling_limit_max_cu !== undefined && input.autoscaling_limit_max_cu !== row.maxCu);
    const { minCu, maxCu } = checkLimits(
      plan,
      input.autoscaling_limit_min_cu ?? row.minCu,
      input.autoscaling_limit_max_cu ?? row.maxCu,
    );
    const branchChanged = input.branch_id !== undefined && input.branch_id !== row.branchId;
    if (branchChanged) {
      // Structural rule 3: the target branch must not already have an endpoint of this kind.
      requireBranch(tx, accountId, projectId, input.branch_id as string);
      if (row.type === "read_write" && hasReadWrite(tx, input.branch_id as string, row.id))
        throw conflict(readWriteTaken(input.branch_id as string));
    }
    const next: EndpointRow = {
      ...row,
      branchId: input.branch_id ?? row.branchId,
      minCu,
      maxCu,
      suspendTimeoutSeconds: input.suspend_timeout_seconds ?? row.suspendTimeoutSeconds,
      poolerEnabled: input.pooler_enabled ?? row.poolerEnabled,
      poolerMode: input.pooler_mode ?? row.poolerMode,
      disabled: input.disabled ?? row.disabled,
      passwordlessAccess: input.passwordless_access ?? row.passwordlessAccess,
      provisioner: input.provisioner ?? row.provisioner,
      name: input.name ?? row.name,
      settings: input.settings ? { ...row.settings, ...input.settings } : row.settings,
      updatedAt: ctx.clock.now(accountId),
    };
    const sized = (input.settings || limitsChanged) && sizedSettingsProblem(next.settings, next.minCu);
    if (sized) throw badRequest(sized);
    const actions = updateActions({
      branchChanged,
      disabledNow: next.disabled && !row.disabled,
      limitsChanged,
      running: heading(row) !== "idle",
    });
    if (actions.includes("start_compute")) requireQuotaLeft(tx, projectId, next.updatedAt);
    updateEndpointRow(tx, next);
    const ops = startEndpointOps(ctx, tx, next, actions);
    return { endpoint: refreshPendingState(tx, next), ops };
  });
  return changed(endpoint, ops);
}

/**
 * Every endpoint of one branch moves to another inside the caller's transaction (a finalized
 * snapshot restore): each running one restarts on its new branch, as a reassignment does.
 */
export function moveBranchEndpoints(
  ctx: Ctx,
  tx: Tx,
  fromBranchId: string,
  toBranchId: string,
): OperationRow[] {
  const ops: OperationRow[] = [];
  for (const row of listBranchEndpointRows(tx, fromBranchId)) {
    const next: EndpointRow = { ...row, branchId: toBranchId, updatedAt: ctx.clock.now(row.accountId) };
    updateEndpointRow(tx, next);
    const actions: OperationAction[] = heading(row) !== "idle" ? ["suspend_compute", "start_compute"] : [];
    ops.push(...startEndpointOps(ctx, tx, next, actions));
    refreshPendingState(tx, next);
  }
  return ops;
}

/**
 * Every running (or starting) endpoint of a project is suspended inside the caller's transaction:
 * what Neon does when a project setting needs its computes to start again (logical replication).
 * The next connection or start runs them with the new setting.
 */
export function suspendProjectEndpoints(ctx: Ctx, tx: Tx, projectId: string): OperationRow[] {
  const ops: OperationRow[] = [];
  for (const row of listProjectEndpointRows(tx, projectId)) {
    if (heading(row) === "idle") continue;
    ops.push(...startEndpointOps(ctx, tx, row, ["suspend_compute"]));
    refreshPendingState(tx, row);
  }
  return ops;
}

/**
 * An endpoint recorded active whose compute could not be started (at a restart, or again after
 * its server exited unasked) is suspended: the API shows it idle rather than active with no
 * server, and the next client's connection starts it through a start_compute that names any
 * failure. One heading elsewhere meanwhile (a suspend, a wake under way) is left to that.
 */
export function suspendUnstarted(ctx: Ctx, endpointId: string): OperationRow[] {
  return ctx.db.transaction((tx) => {
    const row = findEndpointById(tx, endpointId);
    if (row?.currentState !== "active" || row.pendingState !== null) return [];
    const ops = startEndpointOps(ctx, tx, row, ["suspend_compute"]);
    refreshPendingState(tx, row);
    return ops;
  });
}

/** Spec: the response carries the endpoint as it was and an empty operations array. */
export function deleteEndpoint(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  endpointId: string,
): Outcome<{ endpoint: ReturnType<typeof toEndpointJson>; operations: never[] }> {
  const row = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const row = requireEndpoint(tx, accountId, projectId, endpointId);
    if (findBranchById(tx, row.branchId)?.protected)
      throw conflict(
        `endpoint ${endpointId} belongs to protected branch ${row.branchId}; its computes cannot be deleted (unprotect the branch first)`,
      );
    deleteEndpointRow(tx, endpointId);
    closeActivity(tx, { endpointId }, ctx.clock.now(accountId));
    return row;
  });
  return {
    body: { endpoint: toEndpointJson(row, { withPending: true }), operations: [] },
    events: [{ type: "endpoint_deleted", endpointId }],
  };
}

/** start, suspend and restart. */
export function changeEndpointState(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  endpointId: string,
  verb: Verb,
) {
  const { endpoint, ops } = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const row = requireEndpoint(tx, accountId, projectId, endpointId);
    if (row.disabled && verb !== "suspend")
      throw conflict(
        `endpoint ${endpointId} is disabled; enable it (PATCH disabled: false) before you ${verb} it`,
      );
    if (VERB_ACTIONS[verb].includes("start_compute"))
      requireQuotaLeft(tx, projectId, ctx.clock.now(accountId));
    const ops = startEndpointOps(ctx, tx, row, VERB_ACTIONS[verb]);
    return { endpoint: refreshPendingState(tx, row), ops };
  });
  return changed(endpoint, ops);
}

/**
 * A client connection: an endpoint heading for idle is woken through start_compute; an active
 * one has its activity recorded; a disabled one refuses.
 */
export function connectEndpoint(ctx: Ctx, accountId: string, projectId: string, endpointId: string) {
  const { endpoint, ops } = ctx.db.transaction((tx) => {
    requireProject(tx, accountId, projectId);
    const row = requireEndpoint(tx, accountId, projectId, endpointId);
    if (row.disabled) throw conflict(`endpoint ${endpointId} is disabled; connections are refused`);
    // An idle compute of a project whose quota is used up is not started (wakeForConnection's rule).
    if (heading(row) === "idle") requireQuotaLeft(tx, projectId, ctx.clock.now(accountId));
    return clientArrives(ctx, tx, row);
  });
  return changed(endpoint, ops, [{ type: "endpoint_activity", endpointId }]);
}

/**
 * A client arrives at an enabled endpoint (the connect route, the front door): one heading for
 * idle is woken with start_compute; an active one has its activity recorded, so it is not
 * suspended under a client that is still logging in.
 */
function clientArrives(ctx: Ctx, tx: Tx, row: EndpointRow): { endpoint: EndpointRow; ops: OperationRow[] } {
  if (heading(row) === "idle") {
    const ops = startEndpointOps(ctx, tx, row, ["start_compute"]);
    return { endpoint: refreshPendingState(tx, row), ops };
  }
  if (row.currentState === "active") {
    const now = ctx.clock.now(row.accountId);
    recordActivity(tx, row.id, now);
    stampComputeActive(tx, row.projectId, now);
    return { endpoint: { ...row, lastActive: now }, ops: [] };
  }
  return { endpoint: row, ops: [] };
}

/** What the front door learns of an endpoint and a role before it authenticates a client. */
export type LoginTarget =
  | { found: false }
  | {
      found: true;
      projectId: string;
      branchId: string;
      disabled: boolean;
      /** The role's password; null when the branch has no such role, it cannot log in, or its password was set with SQL. */
      password: string | null;
      /** The SCRAM verifier of a password set with SQL on the compute ("" for none; null: `password` holds). */
      verifier: string | null;
      /** The compute's max_connections (from its minimum size). */
      maxConnections: number;
      /** Whether the project's IP allow list lets a client at this address in (true when none applies). */
      allows(peer: string): boolean;
      /** `block_public_connections`: no client may come from the public network (here, every client does). */
      publicBlocked: boolean;
    };

/** Allow lists by their JSON text: a login reads the text, and lists change seldom. */
const allowLists = new Map<string, AllowList | null>();
const ALLOW_LISTS_KEPT = 256;

function allowListOf(json: string | null): AllowList | null {
  if (json === null) return null;
  let list = allowLists.get(json);
  if (list !== undefined) return list;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = undefined; // not a list (stored before settings were checked): none applies
  }
  const entries = Array.isArray(parsed) ? parsed.filter((ip): ip is string => typeof ip === "string") : [];
  list = Array.isArray(parsed) && parsed.length > 0 ? allowList(entries) : null;
  if (allowLists.size >= ALLOW_LISTS_KEPT) allowLists.clear();
  allowLists.set(json, list);
  return list;
}

/** The endpoint a client connects to (by id alone) and the password of the role it logs in as. */
export function findLoginTarget(ctx: Ctx, endpointId: string, roleName: string): LoginTarget {
  const row = loginRow(ctx.db, endpointId, roleName);
  if (!row) return { found: false };
  const list = allowListOf(row.allowedIps);
  return {
    found: true,
    projectId: row.projectId,
    branchId: row.branchId,
    disabled: row.disabled !== 0,
    password: row.password !== null && row.verifier === null && !row.noLogin ? row.password : null,
    verifier: row.verifier !== null && !row.noLogin ? row.verifier : null,
    maxConnections: maxConnections(row.minCu),
    allows: (peer) => allows(list, peer),
    publicBlocked: row.blockPublic === 1,
  };
}

/** Where an endpoint stands for a client connecting to it. */
export type ConnectState = "gone" | "disabled" | "quota" | "active" | "waking";

/**
 * A client connects to an endpoint: one heading for idle is woken with a start_compute operation
 * (recorded as a start through the API would be). `active` when it is settled active; `waking`
 * while operations on it are under way.
 */
export function wakeForConnection(ctx: Ctx, endpointId: string): Outcome<{ state: ConnectState }> {
  // A settled active endpoint whose activity was stamped within the last second needs no write:
  // clients arriving in a stream (SQL over HTTP: one per query) cost a read each.
  const seen = settledActive(ctx.db, endpointId);
  if (seen && seen.lastActive !== null && ctx.clock.now(seen.accountId) - seen.lastActive < ACTIVITY_STAMP_MS)
    return { body: { state: "active" }, events: [] };
  const { state, ops } = ctx.db.transaction((tx) => {
    const none: OperationRow[] = [];
    const row = findEndpointById(tx, endpointId);
    if (!row) return { state: "gone" as const, ops: none };
    if (row.disabled) return { state: "disabled" as const, ops: none };
    // An idle compute of a project whose quota is used up is not started (an active one still serves).
    if (heading(row) === "idle" && quotaUsedUp(tx, row.projectId, ctx.clock.now(row.accountId)))
      return { state: "quota" as const, ops: none };
    const { endpoint, ops } = clientArrives(ctx, tx, row);
    // A branch whose data is being replaced (a restore) is not served until its compute runs on the new data.
    const settled =
      endpoint.currentState === "active" &&
      endpoint.pendingState === null &&
      !branchDataPending(tx, row.branchId);
    return { state: settled ? ("active" as const) : ("waking" as const), ops };
  });
  return { body: { state }, events: operationsStarted(ops) };
}

/**
 * Where a wake left the endpoint: `active`; `failed` when its start failed (the operation says
 * why); `overtaken` when something came after the start — a suspend (explicit, or a restart's),
 * a disable, the endpoint's deletion — which a client arriving now meets afresh.
 */
export function wakeOutcome(ctx: Ctx, endpointId: string): "active" | "failed" | "overtaken" {
  const row = findEndpointById(ctx.db, endpointId);
  if (row?.currentState === "active") return "active";
  if (row && newestStatus(ctx.db, row.projectId, endpointId, "start_compute") === "failed") return "failed";
  return "overtaken";
}

/** How often a stream of clients arriving at an active endpoint stamps its activity (last_active). */
const ACTIVITY_STAMP_MS = 1000;

/** At start: connections a previous run counted are gone with it. */
export function resetClientConnections(ctx: Ctx): number {
  return ctx.db.transaction((tx) => resetConnections(tx));
}

/** A client connection through the front door opened or ended: activity on the endpoint and its project. */
export function recordClientConnection(ctx: Ctx, endpointId: string, delta: 1 | -1): void {
  ctx.db.transaction((tx) => {
    const row = findEndpointById(tx, endpointId);
    if (!row) return;
    const now = ctx.clock.now(row.accountId);
    recordConnection(tx, endpointId, delta, now);
    stampComputeActive(tx, row.projectId, now);
    recordSample(tx, {
      accountId: row.accountId,
      projectId: row.projectId,
      subjectId: endpointId,
      metric: "connections",
      at: now,
      value: Math.max(0, row.openConnections + delta),
    });
  });
}
