/** Pure rules for endpoint states (spec: "States and transitions", compute endpoint). */

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
