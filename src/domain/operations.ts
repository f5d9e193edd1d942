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

export function isTerminal(status: OperationStatus): boolean {
  return status === "finished" || status === "failed";
}
