/**
 * What a service tells the runtime besides its answer: the state changes that give the worker
 * something to do. Services return events with their result; the caller (a route, the seed, the
 * keys CLI) hands them to whoever listens (runtime.ts: the worker). Nothing is called back from
 * inside a transaction.
 */
export type DomainEvent =
  /** Operations were recorded: one may be due after the shortest operation duration. */
  | { type: "operations_started"; operationIds: readonly string[] }
  /** An endpoint saw client activity: its auto-suspend moment moved. */
  | { type: "endpoint_activity"; endpointId: string }
  /** Rows are gone whose real resources (processes, data folders) must go too. */
  | { type: "endpoint_deleted"; endpointId: string }
  | { type: "branch_deleted"; projectId: string; branchId: string }
  | { type: "project_deleted"; projectId: string }
  /** A deleted project waits out its recovery window: its processes end, its data folders stay. */
  | { type: "project_suspended"; projectId: string }
  | { type: "snapshot_deleted"; projectId: string; snapshotId: string };

/** A service's answer and the events its transaction committed. */
export interface Outcome<T> {
  body: T;
  events: readonly DomainEvent[];
}

export function outcome<T>(body: T, events: readonly DomainEvent[] = []): Outcome<T> {
  return { body, events };
}

/** The event for operations a transaction recorded (none when the list is empty). */
export function operationsStarted(operations: readonly { id: string }[]): DomainEvent[] {
  return operations.length ? [{ type: "operations_started", operationIds: operations.map((o) => o.id) }] : [];
}

export type EventSink = (events: readonly DomainEvent[]) => void;
