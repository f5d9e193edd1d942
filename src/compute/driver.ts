import type { ComputeEffect } from "../control-plane/operations/rules.js";
import type { DomainEvent } from "../platform/events.js";

/** Reads and snapshots of a branch's data, for the routes that reach into it (NEON_EMULATOR_COMPUTE=postgres). */
export interface BranchReader {
  /**
   * The schema of one of the branch's databases, as `pg_dump --schema-only` prints it: read
   * through the branch's running primary, or a short-lived server on its data folder; at `point`
   * of its history (`lsn:X/X`, `time:<wall ms>`), from a copy replayed to it.
   */
  schema(projectId: string, branchId: string, database: string, point?: string): Promise<string>;
  /**
   * Copies the branch's data as it is now (a consistent copy, running or not), or as it was at
   * `point` of its history, into the snapshot's folder; resolves to the LSN it was taken at and
   * the bytes of its databases.
   */
  snapshot(
    projectId: string,
    branchId: string,
    snapshotId: string,
    point?: string,
  ): Promise<{ lsn: string; size: number }>;
  /**
   * What the branch's history holds now: null when it keeps none yet (its data made before the
   * emulator kept history), undefined when its data is not made yet.
   */
  historyRange(projectId: string, branchId: string): Promise<HistoryRange | null | undefined>;
  /**
   * Makes a new branch's data now, a copy of its parent as it is (its create_branch operation
   * then finds it made): resolves to the parent's LSN the copy holds, or undefined when the copy
   * fails or takes longer than `waitMs` (it goes on).
   */
  makeNow(projectId: string, branchId: string, waitMs: number): Promise<string | undefined>;
}

/** A branch's history: the LSNs it holds (where it begins, where its WAL ends) and since when (wall ms). */
export interface HistoryRange {
  start: string;
  end: string;
  since?: number | undefined;
  /** The earliest LSN within the project's history_retention_seconds, when it keeps WAL from before. */
  keptFrom?: string | undefined;
}

/** What an effect measured of the branch it acted on: its real `logical_size` and `parent_lsn`. */
export interface EffectResult {
  branch?: {
    id: string;
    logicalSize?: number;
    parentLsn?: string;
    /**
     * A branch made or restored at an LSN: when (wall ms) the last transaction at or before it
     * committed, which its `parent_timestamp` shows (set from it on the account's clock).
     */
    parentCommitWallMs?: number;
    /** The account's time of `parentCommitWallMs` (the worker sets it). */
    parentTimestamp?: number;
  };
}

/**
 * What performs an operation's effect on real resources (Postgres processes, data folders). The
 * worker claims a due operation, has the driver perform its effect, then finalizes the operation
 * and the resource states only if its claim still holds (worker/finish-operations.ts).
 */
export interface ComputeDriver {
  readonly name: string;
  /**
   * True when effects complete at once and touch nothing outside the database: the worker then
   * performs and finalizes them inside the transaction that claims them, so a manual-clock advance
   * stays deterministic. False for a driver whose effects take real time (processes): they run
   * outside any SQLite transaction, and the operation is finalized when the effect settles.
   */
  readonly inline: boolean;
  /**
   * Performs the effect; a rejection (or throw) fails the operation with its message. What it
   * measured on the way is recorded with the operation's completion, in the same transaction.
   */
  perform(effect: ComputeEffect): Promise<EffectResult | undefined> | EffectResult | undefined;
  /**
   * At start, after a crash or a restart: ends processes a previous run left behind and starts
   * again the computes the control plane records as active.
   */
  resume(): Promise<void>;
  /**
   * Rows were deleted without an operation (an endpoint, a branch, an account's projects): their
   * processes end and their data folders go. Other events are ignored.
   */
  discard(event: DomainEvent): Promise<void>;
  /**
   * Shutdown begins (before the worker drains the effects under way): background work the driver
   * does on its own stops where it can, and effects it can take up again at the next start (a
   * replay of a branch's history) stop with EffectCutShort.
   */
  stopping?(): void;
  /** Ends whatever the driver holds (processes, sockets); called once at shutdown. */
  close(): Promise<void>;
  /** A shutdown asked for again while `close` waits: its processes end now, their work cut short. */
  closeNow?(): Promise<void>;
}

/**
 * An effect the emulator's shutdown cut short: its operation is left claimed, as a crash leaves
 * it, and the next start releases the claim and performs the effect again.
 */
export class EffectCutShort extends Error {}
