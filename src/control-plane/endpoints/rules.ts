/**
 * Compute endpoints (specification: Compute endpoint, States and transitions, Limits): sizes,
 * auto-suspend, states and the operations each change starts. Pure: no database, no clock.
 */
import { badRequest, unprocessable } from "../../errors.js";
import { FREE_PLAN_CU, PLANS, type PlanName } from "../../plans.js";
import type { OperationAction } from "../operations/rules.js";

// Server settings

/**
 * Server settings an endpoint's `pg_settings` may not set, each with why: they run commands or
 * load code on the host, name its files, change where the server listens, or write statements
 * (role passwords among them) to a log. (The settings the emulator manages itself, such as
 * max_connections and shared_buffers, may be given and are overridden.)
 */
const HOST_SETTINGS: [RegExp, string][] = [
  [
    /^(archive_command|archive_library|archive_mode|restore_command|archive_cleanup_command|recovery_end_command|ssl_passphrase_command.*)$/,
    "runs commands on the host",
  ],
  [
    /^(shared_preload_libraries|local_preload_libraries|session_preload_libraries|dynamic_library_path|jit_provider)$/,
    "loads code on the host (preload libraries are chosen in the project's settings.preload_libraries)",
  ],
  [
    /^(data_directory|config_file|hba_file|ident_file|external_pid_file|ssl_.*_file|ssl_crl_dir|krb_server_keyfile|stats_temp_directory)$/,
    "names a file on the host",
  ],
  // Not settings: a configuration file's directives, which read another file of the host.
  [
    /^(include|include_if_exists|include_dir)$/,
    "is a configuration file directive that reads a file on the host",
  ],
  [/^(listen_addresses|port|unix_socket_.*|bonjour.*)$/, "changes where the server listens"],
  [/^(ssl|huge_pages|huge_page_size)$/, "depends on the host (the front door serves TLS; huge pages)"],
  [
    /^synchronous_standby_names$/,
    "makes commits wait for standbys, which a compute has none of (read replicas read the branch, as on Neon)",
  ],
  [
    /^(log_.*|logging_collector|syslog_.*|event_source|debug_print_.*|debug_pretty_print)$/,
    "is a server log setting (the emulator keeps statements and passwords out of the compute's log)",
  ],
];

/** A setting name as Postgres takes it (a custom one has a dot: `myapp.tenant`). */
const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$/;

/** Why `pg_settings` may not hold `name`, or null when it may. */
export function pgSettingProblem(name: string): string | null {
  if (!SETTING_NAME.test(name)) return `"${name}" is not a Postgres setting name`;
  const lower = name.toLowerCase();
  const found = HOST_SETTINGS.find(([pattern]) => pattern.test(lower));
  return found ? `${name} cannot be set on a compute: it ${found[1]}` : null;
}

// Compute sizes

export const COMPUTE_SIZES = [0.25, 0.5, 1, 2, 3, 4, 5, 6, 7] as const;
export const COMPUTE_SIZES_TEXT = COMPUTE_SIZES.join(", ");

export function isComputeSize(value: number): boolean {
  return (COMPUTE_SIZES as readonly number[]).includes(value);
}

/**
 * A problem description for a min/max pair, or null when the pair is a fixed size (min = max) or
 * an autoscaling range (min < max) of allowed sizes.
 */
export function computeLimitsProblem(min: number, max: number): string | null {
  if (!isComputeSize(min))
    return `autoscaling_limit_min_cu must be one of ${COMPUTE_SIZES_TEXT} (got ${min})`;
  if (!isComputeSize(max))
    return `autoscaling_limit_max_cu must be one of ${COMPUTE_SIZES_TEXT} (got ${max})`;
  if (min > max) return `autoscaling_limit_min_cu (${min}) must not exceed autoscaling_limit_max_cu (${max})`;
  return null;
}

/** Checks an endpoint's compute limits: allowed sizes, min <= max, and the plan's fixed size. */
export function checkLimits(plan: PlanName, minCu: number, maxCu: number): { minCu: number; maxCu: number } {
  const problem = computeLimitsProblem(minCu, maxCu);
  if (problem) throw badRequest(problem);
  const fixed = PLANS[plan].fixedComputeCu;
  if (fixed !== null && (minCu !== fixed || maxCu !== fixed))
    throw unprocessable(`compute is fixed at ${fixed} CU on the ${plan} plan (got ${minCu}-${maxCu})`);
  return { minCu, maxCu };
}

/** Compute defaults of a project (default_endpoint_settings), checked as checkLimits checks an endpoint. */
export function checkDefaultLimits(plan: PlanName, min: number | undefined, max: number | undefined): void {
  if (min === undefined && max === undefined) return;
  const problem = computeLimitsProblem(min ?? max ?? FREE_PLAN_CU, max ?? min ?? FREE_PLAN_CU);
  if (problem) throw badRequest(`default_endpoint_settings: ${problem}`);
  const fixed = PLANS[plan].fixedComputeCu;
  if (fixed !== null && (min !== fixed || (max ?? min) !== fixed))
    throw unprocessable(`compute is fixed at ${fixed} CU on the ${plan} plan`);
}

/** Rule 2: read replicas are limited to a paid plan. */
export function checkEndpointType(plan: PlanName, type: "read_write" | "read_only"): void {
  if (type === "read_only" && !PLANS[plan].readReplicas)
    throw unprocessable("read replicas (read_only endpoints) require a paid plan");
}

/** Rule 1's answer: a branch has at most one read_write endpoint. */
export function readWriteTaken(branchId: string): string {
  return `branch ${branchId} already has a read_write endpoint; a branch has at most one`;
}

// Auto-suspend

export const SUSPEND_TIMEOUT_DEFAULT = 300;
export const SUSPEND_TIMEOUT_MAX = 604_800; // 7 days
/** suspend_timeout_seconds -1: auto-suspend off, the endpoint stays active. */
export const SUSPEND_DISABLED = -1;

/**
 * The auto-suspend rule, as SQL text over an endpoints row (used by the table's expression index
 * and the worker's queries alike: SQLite uses an expression index only for the same expression,
 * and a partial one only for a query that repeats its condition with the same literals).
 * An endpoint is eligible while active, settled, with a last activity, no client connection open
 * and auto-suspend not disabled (-1); it is due its delay after that activity (0 meaning the default 300 seconds).
 */
export const SUSPEND_ELIGIBLE_SQL = `current_state = 'active' AND pending_state IS NULL AND suspend_timeout_seconds <> ${SUSPEND_DISABLED} AND last_active IS NOT NULL AND open_connections = 0`;
export const SUSPEND_DUE_AT_SQL = `last_active + (CASE suspend_timeout_seconds WHEN 0 THEN ${SUSPEND_TIMEOUT_DEFAULT} ELSE suspend_timeout_seconds END) * 1000`;

// States

export type EndpointState = "init" | "active" | "idle";

/** The state an operation moves its endpoint to, if it moves it at all. */
export function targetState(action: string): EndpointState | null {
  if (action === "start_compute") return "active";
  if (action === "suspend_compute") return "idle";
  return null;
}

/** pending_state: where the last unfinished state-changing operation takes the endpoint; null when none. */
export function pendingStateOf(unfinishedActions: readonly string[]): EndpointState | null {
  let pending: EndpointState | null = null;
  for (const action of unfinishedActions) pending = targetState(action) ?? pending;
  return pending;
}

/** The state after an operation completes: finished moves to its target; a failed start leaves `init` as `idle`. */
export function stateAfter(
  current: EndpointState,
  action: string,
  outcome: "finished" | "failed",
): EndpointState {
  const target = targetState(action);
  if (!target) return current;
  if (outcome === "finished") return target;
  return current === "init" ? "idle" : current;
}

/** Where the endpoint is heading: its pending state if an operation is under way, else its current state. */
export function heading(row: {
  pendingState: EndpointState | null;
  currentState: EndpointState;
}): EndpointState {
  return row.pendingState ?? row.currentState;
}

/** A new endpoint: a disabled one is not started; otherwise `init` heading for `active` with a start_compute. */
export function initialState(disabled: boolean): {
  currentState: EndpointState;
  pendingState: EndpointState | null;
  actions: OperationAction[];
} {
  return disabled
    ? { currentState: "idle", pendingState: null, actions: [] }
    : { currentState: "init", pendingState: "active", actions: ["start_compute"] };
}

export type Verb = "start" | "suspend" | "restart";

/** The operations of start, suspend and restart (restart is both). */
export const VERB_ACTIONS: Record<Verb, OperationAction[]> = {
  start: ["start_compute"],
  suspend: ["suspend_compute"],
  restart: ["suspend_compute", "start_compute"],
};

/**
 * The operations a PATCH starts: always apply_config; a reassigned or newly disabled endpoint is
 * suspended (spec: PATCH with branch change); a compute size change restarts a running endpoint
 * (effects 1 and 2); auto-suspend changes restart nothing (effect 4).
 */
export function updateActions(change: {
  branchChanged: boolean;
  disabledNow: boolean;
  limitsChanged: boolean;
  running: boolean;
}): OperationAction[] {
  if (change.branchChanged || change.disabledNow) return ["apply_config", "suspend_compute"];
  if (change.limitsChanged && change.running) return ["apply_config", "suspend_compute", "start_compute"];
  return ["apply_config"];
}

/** max_connections by compute size (specification's compute table); autoscaling follows the minimum. */
const MAX_CONNECTIONS: Record<number, number> = {
  0.25: 112,
  0.5: 225,
  1: 450,
  2: 901,
  3: 1351,
  4: 1802,
  5: 2253,
  6: 2703,
  7: 3154,
};

export function maxConnections(minCu: number): number {
  return MAX_CONNECTIONS[minCu] ?? 112;
}

/**
 * Why a compute of `minCu` would not start with these `pg_settings`: the connections Postgres
 * keeps for superusers and for `reserved_connections`' roles must leave some of max_connections,
 * which follows the size (checked at start alone, in these words). Values other than plain
 * integers are left to the start.
 */
export function sizedSettingsProblem(settings: unknown, minCu: number): string | null {
  const pgSettings = (settings as { pg_settings?: Record<string, string> } | undefined)?.pg_settings ?? {};
  const value = (name: string, otherwise: number) => {
    const given = Object.entries(pgSettings).find(([key]) => key.toLowerCase() === name)?.[1];
    return given !== undefined && /^\s*\d+\s*$/.test(given) ? Number(given) : otherwise;
  };
  const superuser = value("superuser_reserved_connections", 3);
  const reserved = value("reserved_connections", 0);
  const max = maxConnections(minCu);
  if (superuser + reserved < max) return null;
  return `pg_settings: "superuser_reserved_connections" (${superuser}) plus "reserved_connections" (${reserved}) must be less than "max_connections" (${max}, a ${minCu} CU compute's)`;
}

/** shared_buffers is always 128 MB (specification: a local file cache does the rest). */
export const SHARED_BUFFERS = "128MB";
