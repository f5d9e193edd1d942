import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { endpoints, projects } from "../db/schema/index.js";
import { computeLimitsProblem, FREE_PLAN_CU } from "../domain/compute.js";
import { pendingStateOf } from "../domain/endpoint-state.js";
import type { OperationAction } from "../domain/operations.js";
import { endpointHost, proxyHost } from "../domain/regions.js";
import { badRequest, conflict, notFound, unprocessable } from "../lib/errors.js";
import { type JsonText, jsonText } from "../lib/json-text.js";
import { prepared, statement } from "../lib/prepared.js";
import { cachedRead } from "../lib/read-cache.js";
import { toEndpointJson } from "../views/endpoints.js";
import { type AccountRow, getAccount } from "./accounts.js";
import { type BranchRow, branchNotFound, requireBranch } from "./branches.js";
import { type OperationRow, startOperation, toOperationJson, unfinishedActions } from "./operations.js";
import {
  type DefaultEndpointSettings,
  type ProjectRow,
  projectLocked,
  projectNotFound,
  requireProject,
  requireWritableProject,
} from "./projects.js";
import { uniqueOrConflict } from "./sql.js";

export type EndpointRow = typeof endpoints.$inferSelect;

export interface EndpointInput {
  type: "read_write" | "read_only";
  region_id?: string | undefined;
  settings?: Record<string, unknown> | undefined;
  autoscaling_limit_min_cu?: number | undefined;
  autoscaling_limit_max_cu?: number | undefined;
  provisioner?: string | undefined;
  pooler_enabled?: boolean | undefined;
  pooler_mode?: "transaction" | undefined;
  disabled?: boolean | undefined;
  passwordless_access?: boolean | undefined;
  suspend_timeout_seconds?: number | undefined;
  name?: string | undefined;
}

function readWriteTaken(branchId: string): string {
  return `branch ${branchId} already has a read_write endpoint; a branch has at most one`;
}

/** Checks compute limits: allowed sizes, min <= max, and the free plan's fixed 0.25 CU. */
function checkLimits(
  account: Pick<AccountRow, "plan">,
  minCu: number,
  maxCu: number,
): { minCu: number; maxCu: number } {
  const problem = computeLimitsProblem(minCu, maxCu);
  if (problem) throw badRequest(problem);
  if (account.plan === "free" && (minCu !== FREE_PLAN_CU || maxCu !== FREE_PLAN_CU))
    throw unprocessable(`compute is fixed at ${FREE_PLAN_CU} CU on the free plan (got ${minCu}-${maxCu})`);
  return { minCu, maxCu };
}

function hasReadWrite(tx: Tx, branchId: string, exceptId = ""): boolean {
  const row = prepared(tx, "endpoints.readWriteOnBranch", () =>
    tx
      .select({ id: endpoints.id })
      .from(endpoints)
      .where(
        and(
          eq(endpoints.branchId, sql.placeholder("branchId")),
          eq(endpoints.type, "read_write"),
          ne(endpoints.id, sql.placeholder("exceptId")),
        ),
      )
      .prepare(),
  ).get({ branchId, exceptId });
  return row !== undefined;
}

/** What creating an endpoint needs to know of its project. */
type ProjectForEndpoint = Pick<
  ProjectRow,
  "id" | "accountId" | "regionId" | "provisioner" | "defaultEndpointSettings"
>;

/** Creates an endpoint row and its start_compute operation inside the caller's transaction. */
export function insertEndpoint(
  ctx: Ctx,
  tx: Tx,
  account: Pick<AccountRow, "plan">,
  project: ProjectForEndpoint,
  branch: Pick<BranchRow, "id">,
  input: EndpointInput,
): { endpoint: EndpointRow; operations: OperationRow[] } {
  if (input.type === "read_only" && account.plan === "free")
    throw unprocessable("read replicas (read_only endpoints) require a paid plan");
  if (input.region_id !== undefined && input.region_id !== project.regionId)
    throw badRequest(`region_id must be the project's region ${project.regionId} (got ${input.region_id})`);
  const defaults = project.defaultEndpointSettings as DefaultEndpointSettings;
  const min = input.autoscaling_limit_min_cu ?? defaults.autoscaling_limit_min_cu ?? FREE_PLAN_CU;
  const defaultMax = defaults.autoscaling_limit_max_cu ?? min;
  const { minCu, maxCu } = checkLimits(
    account,
    min,
    input.autoscaling_limit_max_cu ?? Math.max(min, defaultMax),
  );
  // Structural rule 1, checked here for a clear message; the partial unique index enforces it regardless.
  if (input.type === "read_write" && hasReadWrite(tx, branch.id)) throw conflict(readWriteTaken(branch.id));
  const now = ctx.clock.now();
  const id = ctx.ids.endpointId();
  const disabled = input.disabled ?? false;
  const settings: Record<string, unknown> = { ...(input.settings ?? {}) };
  if (!settings.pg_settings && defaults.pg_settings) settings.pg_settings = defaults.pg_settings;
  if (!settings.pg_settings) settings.pg_settings = {};
  const row: EndpointRow = {
    id,
    accountId: project.accountId,
    projectId: project.id,
    branchId: branch.id,
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
    // A disabled endpoint is not started; otherwise it starts in `init` heading for `active`.
    currentState: disabled ? "idle" : "init",
    pendingState: disabled ? null : "active",
    settings,
    poolerEnabled: input.pooler_enabled ?? false,
    poolerMode: input.pooler_mode ?? "transaction",
    disabled,
    passwordlessAccess: input.passwordless_access ?? false,
    lastActive: null,
    startedAt: null,
    suspendedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  uniqueOrConflict(
    () =>
      statement(
        tx,
        `INSERT INTO endpoints (id, account_id, project_id, branch_id, type, name, host, proxy_host,
           region_id, provisioner, creation_source, autoscaling_limit_min_cu, autoscaling_limit_max_cu,
           suspend_timeout_seconds, current_state, pending_state, settings, pooler_enabled, pooler_mode,
           disabled, passwordless_access, last_active, started_at, suspended_at, created_at, updated_at)
         VALUES (@id, @accountId, @projectId, @branchId, @type, @name, @host, @proxyHost,
           @regionId, @provisioner, @creationSource, @minCu, @maxCu,
           @suspendTimeoutSeconds, @currentState, @pendingState, @settings, @poolerEnabled, @poolerMode,
           @disabled, @passwordlessAccess, @lastActive, @startedAt, @suspendedAt, @createdAt, @updatedAt)`,
      ).run({
        ...row,
        // The column encodings Drizzle would apply: JSON text and 0/1 booleans.
        settings: JSON.stringify(row.settings),
        poolerEnabled: row.poolerEnabled ? 1 : 0,
        disabled: row.disabled ? 1 : 0,
        passwordlessAccess: row.passwordlessAccess ? 1 : 0,
      }),
    () => readWriteTaken(branch.id),
  );
  const ops = disabled
    ? []
    : [
        startOperation(ctx, tx, {
          accountId: project.accountId,
          projectId: project.id,
          branchId: branch.id,
          endpointId: id,
          action: "start_compute",
        }),
      ];
  return { endpoint: row, operations: ops };
}

export function createEndpoint(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  input: EndpointInput & { branch_id: string },
) {
  const out = ctx.db.transaction(
    (tx) => {
      // The project, its account's plan and the branch in one statement (this is the hottest write).
      const found = statement<
        Omit<ProjectForEndpoint, "defaultEndpointSettings"> & {
          defaultEndpointSettings: string;
          locked: 0 | 1;
          plan: AccountRow["plan"];
          branch: 1 | null;
        }
      >(
        tx,
        `SELECT p.id AS id, p.account_id AS accountId, p.region_id AS regionId, p.provisioner AS provisioner,
                p.default_endpoint_settings AS defaultEndpointSettings, p.locked AS locked, a.plan AS plan,
                (SELECT 1 FROM branches b
                  WHERE b.id = @branchId AND b.project_id = p.id AND b.account_id = p.account_id) AS branch
           FROM projects p JOIN accounts a ON a.id = p.account_id
          WHERE p.id = @projectId AND p.account_id = @accountId`,
      ).get({ projectId, accountId, branchId: input.branch_id });
      // The same answers, in the same order, as requireWritableProject and requireBranch.
      if (!found) throw projectNotFound(projectId);
      if (found.locked) throw projectLocked(projectId);
      if (!found.branch) throw branchNotFound(projectId, input.branch_id);
      const project = { ...found, defaultEndpointSettings: JSON.parse(found.defaultEndpointSettings) };
      const created = insertEndpoint(ctx, tx, found, project, { id: input.branch_id }, input);
      return {
        endpoint: toEndpointJson(created.endpoint, { withPending: true }),
        operations: created.operations.map(toOperationJson),
      };
    },
    { behavior: "immediate" },
  );
  ctx.notify();
  return out;
}

export function findEndpoint(tx: Tx, accountId: string, projectId: string, endpointId: string) {
  return prepared(tx, "endpoints.find", () =>
    tx
      .select()
      .from(endpoints)
      .where(
        and(
          eq(endpoints.id, sql.placeholder("endpointId")),
          eq(endpoints.projectId, sql.placeholder("projectId")),
          eq(endpoints.accountId, sql.placeholder("accountId")),
        ),
      )
      .prepare(),
  ).get({ endpointId, projectId, accountId });
}

export function requireEndpoint(
  tx: Tx,
  accountId: string,
  projectId: string,
  endpointId: string,
): EndpointRow {
  const row = findEndpoint(tx, accountId, projectId, endpointId);
  if (!row) throw notFound(`endpoint ${endpointId} not found in project ${projectId}`);
  return row;
}

type EndpointList = { endpoints: ReturnType<typeof toEndpointJson>[] };
const listCache = new WeakMap<object, Map<string, { version: number; json: JsonText<EndpointList> }>>();
const LIST_CACHE_PROJECTS = 1000;

/**
 * A project's endpoints, oldest first, as the JSON body `{"endpoints":[...]}`. The serialized
 * list is cached per project and served again while the project's endpoint version (bumped by
 * triggers on every endpoint write, in the same transaction) is unchanged, so a list is never
 * staler than the last committed change. One statement checks the project and reads the version,
 * and not even that runs while the database is unchanged (cachedRead; `request` is an object
 * unique to the request).
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
    () => readEndpointsJson(ctx, accountId, projectId),
    request,
  );
}

function readEndpointsJson(ctx: Ctx, accountId: string, projectId: string): JsonText<EndpointList> {
  const found = statement<{ version: number | null }>(
    ctx.db,
    `SELECT v.version AS version FROM projects p LEFT JOIN endpoint_versions v ON v.project_id = p.id
      WHERE p.id = @projectId AND p.account_id = @accountId`,
  ).get({ projectId, accountId });
  if (!found) throw projectNotFound(projectId);
  const version = found.version ?? 0;
  let cache = listCache.get(ctx.db);
  if (!cache) {
    cache = new Map();
    listCache.set(ctx.db, cache);
  }
  const hit = cache.get(projectId);
  if (hit && hit.version === version) return hit.json;
  const rows = prepared(ctx.db, "endpoints.list", () =>
    ctx.db
      .select()
      .from(endpoints)
      .where(eq(endpoints.projectId, sql.placeholder("projectId")))
      .orderBy(asc(endpoints.createdAt), asc(endpoints.id))
      .prepare(),
  ).all({ projectId });
  const json = jsonText({ endpoints: rows.map((r) => toEndpointJson(r, { withPending: false })) });
  if (cache.size >= LIST_CACHE_PROJECTS) cache.clear();
  cache.set(projectId, { version, json });
  return json;
}

export function getEndpoint(ctx: Ctx, accountId: string, projectId: string, endpointId: string) {
  requireProject(ctx.db, accountId, projectId);
  return {
    endpoint: toEndpointJson(requireEndpoint(ctx.db, accountId, projectId, endpointId), {
      withPending: true,
    }),
  };
}

/** Writes the endpoint's pending_state from its unfinished operations; returns the updated row. */
export function refreshPendingState<R extends Pick<EndpointRow, "id" | "pendingState">>(tx: Tx, row: R): R {
  const pendingState = pendingStateOf(unfinishedActions(tx, row.id));
  if (pendingState !== row.pendingState)
    statement(tx, "UPDATE endpoints SET pending_state = @pendingState WHERE id = @id").run({
      pendingState,
      id: row.id,
    });
  return { ...row, pendingState };
}

function startEndpointOps(ctx: Ctx, tx: Tx, row: EndpointRow, actions: OperationAction[]): OperationRow[] {
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

/** Where the endpoint is heading: its pending state if an operation is under way, else its current state. */
function heading(row: EndpointRow): "init" | "active" | "idle" {
  return row.pendingState ?? row.currentState;
}

export interface UpdateEndpointInput extends Partial<Omit<EndpointInput, "type">> {
  branch_id?: string | undefined;
}

export function updateEndpoint(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  endpointId: string,
  input: UpdateEndpointInput,
) {
  const out = ctx.db.transaction(
    (tx) => {
      requireWritableProject(tx, accountId, projectId);
      const row = requireEndpoint(tx, accountId, projectId, endpointId);
      const account = getAccount(tx, accountId);
      if (input.region_id !== undefined && input.region_id !== row.regionId)
        throw badRequest(`region_id cannot be changed (endpoint is in ${row.regionId})`);
      const limitsChanged =
        (input.autoscaling_limit_min_cu !== undefined && input.autoscaling_limit_min_cu !== row.minCu) ||
        (input.autoscaling_limit_max_cu !== undefined && input.autoscaling_limit_max_cu !== row.maxCu);
      const { minCu, maxCu } = checkLimits(
        account,
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
      const settings = input.settings ? { ...row.settings, ...input.settings } : row.settings;
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
        settings,
        updatedAt: ctx.clock.now(),
      };
      uniqueOrConflict(
        () => tx.update(endpoints).set(next).where(eq(endpoints.id, row.id)).run(),
        () => readWriteTaken(next.branchId),
      );
      const running = heading(row) !== "idle";
      const actions: OperationAction[] = ["apply_config"];
      if (branchChanged || (next.disabled && !row.disabled)) {
        // A reassigned or disabled endpoint is suspended (spec: PATCH with branch change).
        actions.push("suspend_compute");
      } else if (limitsChanged && running) {
        // Effects 1 and 2: a change of compute size restarts a running endpoint.
        actions.push("suspend_compute", "start_compute");
      }
      const ops = startEndpointOps(ctx, tx, next, actions);
      const refreshed = refreshPendingState(tx, next);
      return {
        endpoint: toEndpointJson(refreshed, { withPending: true }),
        operations: ops.map(toOperationJson),
      };
    },
    { behavior: "immediate" },
  );
  ctx.notify();
  return out;
}

export function deleteEndpoint(ctx: Ctx, accountId: string, projectId: string, endpointId: string) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const row = requireEndpoint(tx, accountId, projectId, endpointId);
    tx.delete(endpoints).where(eq(endpoints.id, endpointId)).run();
    // Spec: the response carries the endpoint as it was and an empty operations array.
    return { endpoint: toEndpointJson(row, { withPending: true }), operations: [] as never[] };
  });
}

type Verb = "start" | "suspend" | "restart";
const VERB_ACTIONS: Record<Verb, OperationAction[]> = {
  start: ["start_compute"],
  suspend: ["suspend_compute"],
  restart: ["suspend_compute", "start_compute"],
};

export function changeEndpointState(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  endpointId: string,
  verb: Verb,
) {
  const out = ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    const row = requireEndpoint(tx, accountId, projectId, endpointId);
    if (row.disabled && verb !== "suspend")
      throw conflict(
        `endpoint ${endpointId} is disabled; enable it (PATCH disabled: false) before you ${verb} it`,
      );
    const ops = startEndpointOps(ctx, tx, row, VERB_ACTIONS[verb]);
    const refreshed = refreshPendingState(tx, row);
    return {
      endpoint: toEndpointJson(refreshed, { withPending: true }),
      operations: ops.map(toOperationJson),
    };
  });
  ctx.notify();
  return out;
}

/**
 * A simulated client connection: an endpoint heading for idle is woken through start_compute;
 * an active one has last_active refreshed; a disabled one refuses.
 */
export function connectEndpoint(ctx: Ctx, accountId: string, projectId: string, endpointId: string) {
  const out = ctx.db.transaction((tx) => {
    requireProject(tx, accountId, projectId);
    let row = requireEndpoint(tx, accountId, projectId, endpointId);
    if (row.disabled) throw conflict(`endpoint ${endpointId} is disabled; connections are refused`);
    const now = ctx.clock.now();
    let ops: OperationRow[] = [];
    if (heading(row) === "idle") {
      ops = startEndpointOps(ctx, tx, row, ["start_compute"]);
      row = refreshPendingState(tx, row);
    } else if (row.currentState === "active") {
      tx.update(endpoints).set({ lastActive: now }).where(eq(endpoints.id, row.id)).run();
      tx.update(projects).set({ computeLastActiveAt: now }).where(eq(projects.id, projectId)).run();
      row = { ...row, lastActive: now };
    }
    return { endpoint: toEndpointJson(row, { withPending: true }), operations: ops.map(toOperationJson) };
  });
  ctx.notify();
  return out;
}
