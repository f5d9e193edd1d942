/**
 * How the console names a compute's state (the specification: "the console labels the states
 * Active, Idle, Stopped"; kinds R/W and R/O):
 *   - Stopped: `disabled` is true (it refuses connections and is not started by one);
 *   - Active: `current_state` is `active`;
 *   - Idle: otherwise (`idle`, and `init` before the first start).
 * A `pending_state` other than `current_state` is a transition in progress, shown beside the
 * label: "starting" (towards active) or "suspending" (towards idle).
 */
export type StateLabel = "Active" | "Idle" | "Stopped";

export function stateLabel(e: { disabled: boolean; current_state: string }): StateLabel {
  if (e.disabled) return "Stopped";
  return e.current_state === "active" ? "Active" : "Idle";
}

export function transitionOf(e: {
  current_state: string;
  pending_state?: string | undefined;
}): string | undefined {
  if (!e.pending_state || e.pending_state === e.current_state) return undefined;
  return e.pending_state === "active" ? "starting" : "suspending";
}

export function kindLabel(type: string): "R/W" | "R/O" {
  return type === "read_write" ? "R/W" : "R/O";
}

export function cuRange(e: { autoscaling_limit_min_cu: number; autoscaling_limit_max_cu: number }): string {
  return e.autoscaling_limit_min_cu === e.autoscaling_limit_max_cu
    ? `${e.autoscaling_limit_min_cu} CU`
    : `${e.autoscaling_limit_min_cu}–${e.autoscaling_limit_max_cu} CU`;
}

export function suspendDelay(seconds: number): string {
  if (seconds < 0) return "never";
  if (seconds === 0) return "default (5 min)";
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/** A name as a heading or link shows it: its id when the name is blank (spaces only), so there is something to click. */
export const shownName = (name: string, id: string) => (name.trim() === "" ? id : name);
