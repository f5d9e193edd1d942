/**
 * Operations (specification: Operation, Operation status): which actions exist, how long each
 * takes, which status a new one starts in, and what effect on real resources each one has.
 * Pure: no database, no clock.
 */

/** Operation actions this control plane produces, and what produces each (see the spec's action table). */
export const OPERATION_ACTIONS = [
  "apply_config", // role/database changes, endpoint configuration changes
  "apply_storage_config", // a change of a project's history retention
  "check_availability", // periodic, per branch that has an endpoint
  "create_branch", // POST /projects/{p}/branches
  "create_timeline", // POST /projects (the project with its primary branch)
  "delete_tenant", // DELETE /projects/{p}: deletion of stored data
  "start_compute", // endpoint create/start/wake/restart
  "suspend_compute", // auto-suspend, explicit suspend, restart, reassignment
] as const;
export type OperationAction = (typeof OPERATION_ACTIONS)[number];

export const OPERATION_STATUSES = ["scheduling", "running", "finished", "failed"] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

/**
 * Unfinished operations, written out as SQL text shared by the partial indexes of the table and
 * the queries meant to use them: SQLite uses a partial index only for a query that repeats its
 * condition with the same literals (a bound parameter never matches).
 */
export const UNFINISHED_OPERATION_SQL = "status IN ('scheduling', 'running')";

/** Default durations in milliseconds, short so interactive use and polling clients feel real. */
export const DEFAULT_OPERATION_MS: Record<OperationAction, number> = {
  apply_config: 300,
  apply_storage_config: 300,
  check_availability: 500,
  create_branch: 300,
  create_timeline: 500,
  delete_tenant: 500,
  start_compute: 1000,
  suspend_compute: 500,
};

/**
 * Operations on one endpoint apply in order: one with an unfinished predecessor on the same
 * endpoint waits as `scheduling`; every other operation starts `running`. Nothing else waits, so
 * an endpoint create always answers a running start_compute (spec: endpoint states table), even
 * on a branch still being created.
 */
export function initialStatus(blockedByEarlierOnEndpoint: boolean): "scheduling" | "running" {
  return blockedByEarlierOnEndpoint ? "scheduling" : "running";
}

/**
 * What completing an operation does to real resources, for the compute driver to perform
 * (compute/driver.ts). The control plane's own rows move when the operation is finalized.
 */
export type ComputeEffect =
  | { kind: "start_compute"; endpointId: string }
  | { kind: "suspend_compute"; endpointId: string }
  | { kind: "create_timeline"; projectId: string; branchId: string }
  | { kind: "create_branch"; projectId: string; branchId: string }
  | { kind: "apply_config"; projectId: string; branchId: string | null; endpointId: string | null }
  | { kind: "delete_tenant"; projectId: string }
  | { kind: "apply_storage_config"; projectId: string };

/** The effect of an operation, or null when it has none beyond its own row (availability checks). */
export function effectOf(op: {
  action: OperationAction;
  projectId: string;
  branchId: string | null;
  endpointId: string | null;
}): ComputeEffect | null {
  switch (op.action) {
    case "start_compute":
    case "suspend_compute":
      return op.endpointId ? { kind: op.action, endpointId: op.endpointId } : null;
    case "create_timeline":
    case "create_branch":
      return op.branchId ? { kind: op.action, projectId: op.projectId, branchId: op.branchId } : null;
    case "apply_config":
      return {
        kind: "apply_config",
        projectId: op.projectId,
        branchId: op.branchId,
        endpointId: op.endpointId,
      };
    case "delete_tenant":
    case "apply_storage_config":
      return { kind: op.action, projectId: op.projectId };
    case "check_availability":
      return null;
  }
}

/** Actions whose completion has an effect for the compute driver (effectOf is non-null for them). */
export const EFFECT_ACTIONS: readonly OperationAction[] = [
  "apply_config",
  "apply_storage_config",
  "create_branch",
  "create_timeline",
  "delete_tenant",
  "start_compute",
  "suspend_compute",
];

/** Actions whose completion changes control-plane rows beyond the operation itself (an endpoint's or a branch's state). */
export const STATE_CHANGING_ACTIONS: readonly OperationAction[] = [
  "create_branch",
  "create_timeline",
  "start_compute",
  "suspend_compute",
];
