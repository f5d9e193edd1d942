import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { PlanName } from "../../plans.js";
import type { Tx } from "../../platform/db.js";
import { insertRow, uniqueOrConflict } from "../../platform/sql.js";
import { prepared, statement } from "../../platform/statements.js";
import type { EndpointRow } from "../access.js";
import { type Traffic, trafficOf } from "../consumption/meter.js";
import { unfinishedActions } from "../operations/store.js";
import type { QuotaUsage } from "../projects/quota.js";
import {
  type EndpointState,
  pendingStateOf,
  readWriteTaken,
  SUSPEND_DUE_AT_SQL,
  SUSPEND_ELIGIBLE_SQL,
} from "./rules.js";
import { endpoints } from "./table.js";

/** Inserts an endpoint; the partial unique index answers a second read_write on the branch with 409. */
export function insertEndpoint(tx: Tx, row: EndpointRow): void {
  uniqueOrConflict(
    () => insertRow(tx, endpoints, row),
    () => readWriteTaken(row.branchId),
  );
}

export function updateEndpointRow(tx: Tx, row: EndpointRow): void {
  uniqueOrConflict(
    () => tx.update(endpoints).set(row).where(eq(endpoints.id, row.id)).run(),
    () => readWriteTaken(row.branchId),
  );
}

export function deleteEndpointRow(tx: Tx, endpointId: string): void {
  tx.delete(endpoints).where(eq(endpoints.id, endpointId)).run();
}

export function hasReadWrite(tx: Tx, branchId: string, exceptId = ""): boolean {
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
export interface ProjectForEndpoint {
  id: string;
  accountId: string;
  regionId: string;
  provisioner: string;
  defaultEndpointSettings: Record<string, unknown>;
}

/**
 * Everything an endpoint create checks, in one statement: the project (with its lock), the
 * account's plan and whether the branch belongs to the project. What it buys: the create is the
 * hottest write, and three lookups cost three statements.
 */
export function readCreateContext(
  tx: Tx,
  accountId: string,
  projectId: string,
  branchId: string,
): (ProjectForEndpoint & { locked: boolean; plan: PlanName; branchFound: boolean }) | undefined {
  const found = statement<
    Omit<ProjectForEndpoint, "defaultEndpointSettings"> & {
      defaultEndpointSettings: string;
      locked: 0 | 1;
      plan: PlanName;
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
  ).get({ projectId, accountId, branchId });
  if (!found) return undefined;
  const { branch, locked, defaultEndpointSettings, ...project } = found;
  return {
    ...project,
    defaultEndpointSettings: JSON.parse(defaultEndpointSettings),
    locked: locked === 1,
    branchFound: branch === 1,
  };
}

/** The project's endpoint version (bumped by triggers on every endpoint write), and whether the project is the account's. */
export function readEndpointVersion(
  tx: Tx,
  accountId: string,
  projectId: string,
): { version: number } | undefined {
  const found = statement<{ version: number | null }>(
    tx,
    `SELECT v.version AS version FROM projects p LEFT JOIN endpoint_versions v ON v.project_id = p.id
      WHERE p.id = @projectId AND p.account_id = @accountId`,
  ).get({ projectId, accountId });
  return found && { version: found.version ?? 0 };
}

/** A project's endpoints, oldest first. */
export function listProjectEndpointRows(tx: Tx, projectId: string): EndpointRow[] {
  return prepared(tx, "endpoints.list", () =>
    tx
      .select()
      .from(endpoints)
      .where(eq(endpoints.projectId, sql.placeholder("projectId")))
      .orderBy(asc(endpoints.createdAt), asc(endpoints.id))
      .prepare(),
  ).all({ projectId });
}

/** A branch's endpoints, oldest first. */
export function listBranchEndpointRows(tx: Tx, branchId: string): EndpointRow[] {
  return tx
    .select()
    .from(endpoints)
    .where(eq(endpoints.branchId, branchId))
    .orderBy(asc(endpoints.createdAt), asc(endpoints.id))
    .all();
}

export function findProjectEndpoint(tx: Tx, projectId: string, endpointId: string): EndpointRow | undefined {
  return tx
    .select()
    .from(endpoints)
    .where(and(eq(endpoints.id, endpointId), eq(endpoints.projectId, projectId)))
    .get();
}

export function findBranchReadWrite(tx: Tx, branchId: string): EndpointRow | undefined {
  return tx
    .select()
    .from(endpoints)
    .where(and(eq(endpoints.branchId, branchId), eq(endpoints.type, "read_write")))
    .get();
}

/** Writes the endpoint's pending_state from its unfinished operations; returns the updated row. */
export function refreshPendingState<R extends { id: string; pendingState: EndpointState | null }>(
  tx: Tx,
  row: R,
): R {
  const pendingState = pendingStateOf(unfinishedActions(tx, row.id));
  if (pendingState !== row.pendingState)
    statement(tx, "UPDATE endpoints SET pending_state = @pendingState WHERE id = @id").run({
      pendingState,
      id: row.id,
    });
  return { ...row, pendingState };
}

export function readState(
  tx: Tx,
  endpointId: string,
): { id: string; currentState: EndpointState } | undefined {
  return statement<{ id: string; currentState: EndpointState }>(
    tx,
    "SELECT id, current_state AS currentState FROM endpoints WHERE id = @id",
  ).get({ id: endpointId });
}

/**
 * What a state change of a compute records, in one statement: the new current and pending
 * states, and the moment it started (`last_active` and `started_at`) or was suspended
 * (`suspended_at`). The one writer of these columns besides client activity (recordActivity).
 */
export function recordState(
  tx: Tx,
  change: {
    id: string;
    next: EndpointState;
    pending: EndpointState | null;
    now: number;
    started: boolean;
    suspended: boolean;
  },
): void {
  statement(
    tx,
    `UPDATE endpoints SET current_state = @next, pending_state = @pending, updated_at = @now,
       last_active = CASE WHEN @started THEN @now ELSE last_active END,
       started_at = CASE WHEN @started THEN @now ELSE started_at END,
       suspended_at = CASE WHEN @suspended THEN @now ELSE suspended_at END
     WHERE id = @id`,
  ).run({ ...change, started: change.started ? 1 : 0, suspended: change.suspended ? 1 : 0 });
  // A start (or restart, perhaps at a new size) begins a new active period; any other state ends it.
  if (change.next !== "active" || change.started) closeActivity(tx, { endpointId: change.id }, change.now);
  if (change.next === "active" && change.started)
    statement(
      tx,
      `INSERT INTO compute_activity (account_id, project_id, branch_id, endpoint_id, cu, started_at)
       SELECT account_id, project_id, branch_id, id, autoscaling_limit_min_cu, @now FROM endpoints
        WHERE id = @id`,
    ).run({ id: change.id, now: change.now });
}

/** Ends the open active periods of an endpoint, a branch's or a project's computes (they stop or go). */
export function closeActivity(
  tx: Tx,
  of: { endpointId: string } | { branchId: string } | { projectId: string } | { accountId: string },
  now: number,
): void {
  const [column, id] =
    "endpointId" in of
      ? ["endpoint_id", of.endpointId]
      : "branchId" in of
        ? ["branch_id", of.branchId]
        : "projectId" in of
          ? ["project_id", of.projectId]
          : ["account_id", of.accountId];
  statement(
    tx,
    `UPDATE compute_activity SET ended_at = max(@now, started_at) WHERE ${column} = @id AND ended_at IS NULL`,
  ).run({ id, now });
}

export interface Usage {
  /** Seconds computes were active (summed over computes). */
  activeSeconds: number;
  /** Compute-unit seconds: active seconds times the size each compute ran at. */
  computeSeconds: number;
}
export const NO_USAGE: Usage = { activeSeconds: 0, computeSeconds: 0 };

const OVERLAP = "max(0, min(coalesce(ended_at, @now), @now) - max(started_at, @since))";

/** Usage of a project's or a branch's computes between `since` and `now` (ms). */
export function usageOf(
  tx: Tx,
  of: { projectId: string } | { branchId: string },
  now: number,
  since = 0,
): Usage {
  const [column, id] = "projectId" in of ? ["project_id", of.projectId] : ["branch_id", of.branchId];
  const row = statement<{ active: number | null; compute: number | null }>(
    tx,
    `SELECT sum(${OVERLAP}) / 1000.0 AS active, sum(${OVERLAP} * cu) / 1000.0 AS compute
       FROM compute_activity WHERE ${column} = @id AND started_at < @now`,
  ).get({ id, now, since });
  return { activeSeconds: Math.floor(row?.active ?? 0), computeSeconds: Math.floor(row?.compute ?? 0) };
}

/**
 * What a project's computes used between `since` and `now` (milliseconds, not rounded), and how
 * many of them run now with their sizes (one that started at `now` included): what its quota is
 * judged by (projects/quota.ts).
 */
export function quotaUsage(tx: Tx, projectId: string, now: number, since: number): QuotaUsage {
  // Only periods open or ended after `since` count: two ranges of one index (a planner without
  // statistics would walk the project's whole history through compute_activity_project_idx).
  const row = statement<Omit<QuotaUsage, keyof Traffic>>(
    tx,
    `SELECT coalesce(sum(${OVERLAP}), 0) AS activeMs, coalesce(sum(${OVERLAP} * cu), 0) AS computeMs,
            coalesce(sum(ended_at IS NULL), 0) AS open,
            coalesce(sum(CASE WHEN ended_at IS NULL THEN cu ELSE 0 END), 0) AS openCu
       FROM (SELECT started_at, ended_at, cu FROM compute_activity INDEXED BY compute_activity_project_end_idx
              WHERE project_id = @id AND ended_at IS NULL AND started_at <= @now
             UNION ALL
             SELECT started_at, ended_at, cu FROM compute_activity INDEXED BY compute_activity_project_end_idx
              WHERE project_id = @id AND ended_at > @since AND started_at <= @now)`,
  ).get({ id: projectId, now, since });
  const traffic = trafficOf(tx, { projectId }, now, since);
  return { ...(row ?? { activeMs: 0, computeMs: 0, open: 0, openCu: 0 }), ...traffic };
}

/** Usage of each branch of a project up to `now`, in one query (a branch list). */
export function usageByBranch(tx: Tx, projectId: string, now: number): Map<string, Usage> {
  return usageGrouped(tx, "branch_id", "project_id = @key", projectId, now);
}

/** A client was active on the endpoint at `now`: its auto-suspend delay counts from here. */
export function recordActivity(tx: Tx, endpointId: string, now: number): void {
  statement(tx, "UPDATE endpoints SET last_active = @now WHERE id = @id").run({ now, id: endpointId });
}

/**
 * The endpoint's compute sent clients bytes (the front door's metering, each second): an active
 * one's last activity moves up to its account's `now`, as Neon's last_active follows the compute's
 * activity while connections stay open (the auto-suspend delay still counts from the last one's end).
 */
export function recordTraffic(tx: Tx, endpointId: string, now: (accountId: string) => number): void {
  const row = statement<{ accountId: string }>(
    tx,
    "SELECT account_id AS accountId FROM endpoints WHERE id = @id AND current_state = 'active'",
  ).get({ id: endpointId });
  if (!row) return;
  statement(
    tx,
    "UPDATE endpoints SET last_active = @now WHERE id = @id AND (last_active IS NULL OR last_active < @now)",
  ).run({ now: now(row.accountId), id: endpointId });
}

/** Active endpoints whose auto-suspend delay has passed (rules.ts: the auto-suspend rule). */
export function suspendDue(
  tx: Tx,
  now: number,
  limit: number,
  /** One account's endpoints (a manual clock's pass), or every account's. */
  accountId: string | null,
): {
  id: string;
  accountId: string;
  projectId: string;
  branchId: string;
  pendingState: EndpointState | null;
}[] {
  return statement<{
    id: string;
    accountId: string;
    projectId: string;
    branchId: string;
    pendingState: EndpointState | null;
  }>(
    tx,
    `SELECT id, account_id AS accountId, project_id AS projectId, branch_id AS branchId,
            pending_state AS pendingState
       FROM endpoints INDEXED BY ${accountId === null ? "endpoints_suspend_due_idx" : "endpoints_account_suspend_due_idx"}
      WHERE ${SUSPEND_ELIGIBLE_SQL} AND ${SUSPEND_DUE_AT_SQL} <= @now${accountId === null ? "" : " AND account_id = @accountId"}
      LIMIT @limit`,
  ).all({ now, limit, accountId });
}

/** The earliest moment an endpoint becomes due for auto-suspend, or null. */
export function nextSuspendAt(tx: Tx, accountId: string | null): number | null {
  return (
    statement<{ t: number | null }>(
      tx,
      accountId === null
        ? `SELECT MIN(${SUSPEND_DUE_AT_SQL}) AS t FROM endpoints INDEXED BY endpoints_suspend_due_idx
            WHERE ${SUSPEND_ELIGIBLE_SQL}`
        : `SELECT MIN(${SUSPEND_DUE_AT_SQL}) AS t FROM endpoints INDEXED BY endpoints_account_suspend_due_idx
            WHERE ${SUSPEND_ELIGIBLE_SQL} AND account_id = @accountId`,
    ).get({ accountId })?.t ?? null
  );
}

/** An endpoint by id alone (the front door knows no account): what a login needs of it. */
export function findEndpointById(tx: Tx, endpointId: string): EndpointRow | undefined {
  // Prepared once: the front door reads it for every client (and SQL over HTTP for every query).
  return prepared(tx, "endpoints.byId", () =>
    tx
      .select()
      .from(endpoints)
      .where(eq(endpoints.id, sql.placeholder("endpointId")))
      .prepare(),
  ).get({ endpointId });
}

/** An endpoint's fields a login needs, with its branch's role of that name (null fields: no such role). */
interface LoginRow {
  projectId: string;
  branchId: string;
  disabled: number;
  minCu: number;
  password: string | null;
  verifier: string | null;
  noLogin: number | null;
  /** The project's allow list (JSON), null when it does not apply to this branch or is unset. */
  allowedIps: string | null;
  /** settings.block_public_connections (1 when set). */
  blockPublic: number | null;
}

/**
 * What the front door reads of an endpoint and a role before it authenticates a client (for SQL
 * over HTTP, before every query): one raw statement, without the Drizzle row mapping (JSON
 * settings parsed, every column converted) that cost more than the lookup itself.
 */
export function loginRow(tx: Tx, endpointId: string, roleName: string): LoginRow | undefined {
  return statement<LoginRow>(
    tx,
    `SELECT e.project_id AS projectId, e.branch_id AS branchId, e.disabled AS disabled,
            e.autoscaling_limit_min_cu AS minCu, r.password AS password, r.verifier AS verifier, r.no_login AS noLogin,
            CASE WHEN json_extract(p.settings, '$.allowed_ips.protected_branches_only') = 1 AND b.protected = 0
                 THEN NULL ELSE json_extract(p.settings, '$.allowed_ips.ips') END AS allowedIps,
            json_extract(p.settings, '$.block_public_connections') AS blockPublic
       FROM endpoints e JOIN projects p ON p.id = e.project_id JOIN branches b ON b.id = e.branch_id
            LEFT JOIN roles r ON r.branch_id = e.branch_id AND r.name = @role
      WHERE e.id = @id`,
  ).get({ id: endpointId, role: roleName });
}

/**
 * An endpoint a client may connect to with nothing to write, if its activity was stamped recently
 * enough: settled active, not disabled, its branch's data made (raw, as loginRow). Its account
 * (whose clock says what recently is) and last activity; undefined when it is not so.
 */
export function settledActive(
  tx: Tx,
  endpointId: string,
): { accountId: string; lastActive: number | null } | undefined {
  return statement<{ accountId: string; lastActive: number | null }>(
    tx,
    `SELECT e.account_id AS accountId, e.last_active AS lastActive
       FROM endpoints e JOIN branches b ON b.id = e.branch_id
      WHERE e.id = @id AND e.disabled = 0 AND e.current_state = 'active' AND e.pending_state IS NULL
        AND b.current_state != 'init'`,
  ).get({ id: endpointId });
}

/**
 * A client connection through the front door opened (+1) or ended (-1) at `now`: the count keeps
 * the endpoint from auto-suspending, and its last activity is the moment.
 */
export function recordConnection(tx: Tx, endpointId: string, delta: 1 | -1, now: number): void {
  statement(
    tx,
    `UPDATE endpoints SET open_connections = max(0, open_connections + @delta), last_active = @now
      WHERE id = @id`,
  ).run({ delta, now, id: endpointId });
}

/** At start: no connection survives a restart. */
export function resetConnections(tx: Tx): number {
  return statement(tx, "UPDATE endpoints SET open_connections = 0 WHERE open_connections <> 0").run().changes;
}

/** Lifetime usage of each of the given projects up to `now`, in one query (a project list). */
export function usageByProject(tx: Tx, projectIds: readonly string[], now: number): Map<string, Usage> {
  if (projectIds.length === 0) return new Map();
  const where = "project_id IN (SELECT value FROM json_each(@key))";
  return usageGrouped(tx, "project_id", where, JSON.stringify(projectIds), now);
}

/** Usage up to `now` of the compute records matching `where` (on @key), summed per `by`. */
function usageGrouped(
  tx: Tx,
  by: "branch_id" | "project_id",
  where: string,
  key: string,
  now: number,
): Map<string, Usage> {
  const rows = statement<{ id: string; active: number; compute: number }>(
    tx,
    `SELECT ${by} AS id, sum(${OVERLAP}) / 1000.0 AS active, sum(${OVERLAP} * cu) / 1000.0 AS compute
       FROM compute_activity WHERE ${where} AND started_at < @now GROUP BY ${by}`,
  ).all({ key, now, since: 0 });
  return new Map(
    rows.map((r) => [r.id, { activeSeconds: Math.floor(r.active), computeSeconds: Math.floor(r.compute) }]),
  );
}
