import type { Logger } from "pino";
import { type ComputeDriver, EffectCutShort, type EffectResult } from "../compute/driver.js";
import { noneDriver } from "../compute/none.js";
import type { Ctx } from "../context.js";
import { expireBranches } from "../control-plane/branches/service.js";
import { nextExpiryAt } from "../control-plane/branches/store.js";
import { findEndpointById, nextSuspendAt } from "../control-plane/endpoints/store.js";
import { manualClockKey, manualTimeAt, recordClockMove, writeState } from "../emulator/state-store.js";
import { clockNotManual } from "../errors.js";
import { type Clock, ManualClock, stopwatch, wallNow } from "../platform/clock.js";
import { checkpointWal, type Tx } from "../platform/db.js";
import { autoSuspend } from "./auto-suspend.js";
import { nextCheckAt, scheduleChecks } from "./availability-checks.js";
import {
  type Claimed,
  dueNowForEndpoint,
  finalizeClaimed,
  finishDue,
  nextOperationDueAt,
  promoteScheduled,
  releaseClaims,
  type Scope,
} from "./finish-operations.js";
import { pruneMonitoring, pruneOperations } from "./prune-operations.js";
import { nextQuotaAt, quotaSuspend } from "./quota-suspend.js";

/** An endpoint has a few operations queued at most (a suspend, a start): rounds to perform them all. */
const EXPEDITE_ROUNDS = 8;

/** How many stops of a manual-clock advance share one commit. */
const MOMENTS_PER_COMMIT = 32;

/** Wall time a client's advance works before it lets other requests through. */
const SLICE_MS = 20;
/** How often a long advance copies the WAL back into the database file (see advanceSettled). */
const CHECKPOINT_MS = 100;

/** Lets the requests and I/O that arrived meanwhile run before the next slice. */
const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Longest sleep of the real-time loop, so a change made by another process is seen soon. */
const MAX_SLEEP_MS = 1000;

/**
 * Shortest sleep of the real-time loop. Under a steady stream of writes something is always
 * about to be due; waking at most this often lets one pass (one transaction) complete a batch
 * of operations instead of a few, at the price of completing each up to this much late.
 */
const MIN_SLEEP_MS = 20;

let workersCreated = 0;

export interface WorkerOptions {
  driver?: ComputeDriver;
  logger?: Logger;
}

/**
 * Advances operations and endpoint states. Each pass runs in one immediate transaction and
 * re-checks the rows it claims, so a crash between passes loses nothing and repeats nothing: on
 * restart, whatever was due simply becomes due again. Effects go through the compute driver:
 * claim -> perform -> finalize only if the claim still holds (finish-operations.ts).
 */
export class Worker {
  private timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (clock milliseconds). */
  private timerAt = Number.POSITIVE_INFINITY;
  private running = false;
  /** Set at shutdown: no more effects are started for waiting clients. */
  private stopped = false;
  private stepping = false;
  private readonly shortestOperationMs: number;
  private readonly driver: ComputeDriver;
  private readonly logger: Logger | undefined;
  /** Effects being performed outside a transaction, with the operation each performs. */
  private readonly inflight = new Map<Promise<void>, Claimed>();
  private readonly claimPrefix: string;
  private claims = 0;

  constructor(
    private readonly ctx: Ctx,
    options: WorkerOptions = {},
  ) {
    this.driver = options.driver ?? noneDriver;
    this.logger = options.logger;
    this.shortestOperationMs = Math.min(...Object.values(ctx.config.operationMs));
    // Unique among the workers alive on one database: a process id and this worker's number in it.
    this.claimPrefix = `${process.pid}.${++workersCreated}`;
  }

  private get clock(): Clock {
    return this.ctx.clock;
  }

  /** Accounts' manual times not yet persisted: the next pass writes them in its own transaction. */
  private readonly unsavedClocks = new Map<string, number>();

  private saveClocks(tx: Tx): void {
    for (const [accountId, ms] of this.unsavedClocks) writeState(tx, manualClockKey(accountId), String(ms));
  }

  /**
   * One pass at the scope's current time (an account's, with a manual clock; the real time for
   * every account otherwise): complete, promote, suspend, check, prune. Returns how many rows moved.
   */
  private pass(scope: Scope): number {
    const now = this.clock.now(scope);
    const { moved, claimed, expired } = this.ctx.db.transaction(
      (tx) => {
        // Persisted with the rows stamped with it, atomically: a crash can never leave rows later
        // than the clock a restart resumes from.
        this.saveClocks(tx);
        const finished = finishDue(tx, this.driver, now, () => `${this.claimPrefix}:${++this.claims}`, scope);
        const expired = expireBranches(tx, now, scope);
        const moved =
          finished.moved +
          expired.length +
          promoteScheduled(this.ctx, tx, now, scope) +
          quotaSuspend(this.ctx, tx, now, scope) +
          autoSuspend(this.ctx, tx, now, scope) +
          scheduleChecks(this.ctx, tx, now, scope) +
          pruneOperations(this.ctx, tx, now, scope) +
          pruneMonitoring(this.ctx, tx, now, scope);
        this.unsavedClocks.clear();
        return { moved, claimed: finished.claimed, expired };
      },
      { behavior: "immediate" },
    );
    for (const c of claimed) this.perform(c);
    // An expired branch's computes stop and its data goes, as after a DELETE of it.
    for (const event of expired)
      this.driver
        .discard(event)
        .catch((err) =>
          this.logger?.error({ err, branch: event.branchId }, "could not remove an expired branch's data"),
        );
    return moved;
  }

  /** Performs a claimed operation's effect outside any transaction, then finalizes it. */
  private perform(claimed: Claimed): void {
    const settle = (outcome: "finished" | "failed", error: string | null, result?: EffectResult) => {
      try {
        this.ctx.db.transaction((tx) => {
          const now = this.clock.now(claimed.op.accountId);
          const commit = result?.branch?.parentCommitWallMs;
          // A branch made or restored at an LSN shows when its last transaction committed, on the account's clock.
          if (result?.branch && commit !== undefined)
            result.branch.parentTimestamp =
              this.clock.mode === "real" ? commit : manualTimeAt(tx, claimed.op.accountId, commit, now);
          return finalizeClaimed(tx, claimed, outcome, error, now, result);
        });
      } catch (err) {
        // The claim stays: the operation is retried after a restart releases it.
        this.logger?.error({ err, operation: claimed.op.id }, "could not record an operation's outcome");
      }
      this.notify();
    };
    const done = (async () => {
      try {
        settle("finished", null, await this.driver.perform(claimed.effect));
      } catch (err) {
        if (err instanceof EffectCutShort) {
          this.logger?.info(
            { operation: claimed.op.id, action: claimed.op.action },
            "the shutdown cut an operation's effect short; the next start performs it again",
          );
          return;
        }
        this.logger?.warn(
          { err, operation: claimed.op.id, action: claimed.op.action },
          "an operation's effect failed",
        );
        settle("failed", err instanceof Error ? err.message : String(err));
      }
    })();
    this.inflight.set(done, claimed);
    void done.finally(() => this.inflight.delete(done));
  }

  /** Resolves once every effect under way has been performed and finalized. */
  async drain(): Promise<void> {
    while (this.inflight.size) await Promise.all(this.inflight.keys());
  }

  /** The operations whose effects are under way (what a shutdown waits for). */
  underWay(): { id: string; action: string; project_id: string }[] {
    return [...this.inflight.values()].map(({ op }) => ({
      id: op.id,
      action: op.action,
      project_id: op.projectId,
    }));
  }

  /**
   * A client waits on the endpoint (a connection waking it): its unfinished operations, and those
   * making or replacing its branch's data, are performed now, whatever their duration and in either clock mode (stamped with the clock's
   * current time), one after another until none is left.
   */
  async expedite(endpointId: string): Promise<void> {
    const endpoint = findEndpointById(this.ctx.db, endpointId);
    if (!endpoint) return;
    const { branchId, accountId } = endpoint;
    const scope: Scope = this.clock.mode === "manual" ? accountId : null;
    const waitsOn = (op: Claimed["op"]) =>
      op.endpointId === endpointId ||
      (op.branchId === branchId && (op.action === "create_branch" || op.action === "create_timeline"));
    for (let round = 0; round < EXPEDITE_ROUNDS && !this.stopped; round++) {
      const now = this.clock.now(accountId);
      const unfinished = this.ctx.db.transaction((tx) => dueNowForEndpoint(tx, endpointId, now), {
        behavior: "immediate",
      });
      if (unfinished === 0) return;
      this.runUntilIdle(scope);
      const mine = [...this.inflight].filter(([, c]) => waitsOn(c.op)).map(([p]) => p);
      await Promise.all(mine);
    }
  }

  /** At start: claims a previous process left behind (it stopped mid-effect) are released, so they run again. */
  releaseStaleClaims(): number {
    return this.ctx.db.transaction((tx) => releaseClaims(tx));
  }

  /** Runs everything due at the scope's current time until nothing more moves. */
  runUntilIdle(scope: Scope = null): number {
    if (this.stepping) return 0;
    this.stepping = true;
    try {
      let total = 0;
      for (let moved = this.pass(scope); moved > 0; moved = this.pass(scope)) total += moved;
      return total;
    } finally {
      this.stepping = false;
    }
  }

  /** The earliest time at which anything becomes due, or null when nothing ever will. */
  nextEventAt(scope: Scope = null): number | null {
    const db = this.ctx.db;
    const times = [
      nextOperationDueAt(db, scope),
      nextSuspendAt(db, scope),
      nextCheckAt(this.ctx, db, scope),
      nextQuotaAt(db, this.clock.now(scope), scope),
      nextExpiryAt(db, this.clock.now(scope), scope),
    ].filter((t): t is number => t !== null);
    // Waiting (scheduling) operations move only when another completes, a time already counted.
    return times.length ? Math.min(...times) : null;
  }

  /**
   * Manual clock: moves the account's time forward by `seconds`, stopping at every moment
   * something of that account becomes due so each transition happens at its own time, then
   * persists the new time. Other accounts' time and rows are untouched. Synchronous (the
   * in-process tests' advance); clients' advances go through advanceSettled, which yields between
   * slices.
   */
  advance(accountId: string, seconds: number): number {
    const clock = this.manualClock();
    const target = clock.now(accountId) + Math.round(seconds * 1000);
    this.recordMove(clock, accountId, target);
    this.runUntilIdle(accountId);
    while (this.advanceSlice(clock, accountId, target, Number.POSITIVE_INFINITY)) {}
    this.moveClock(clock, accountId, target);
    this.runUntilIdle(accountId);
    return clock.now(accountId);
  }

  /** An advance begins: when, in wall time (branch history maps the account's times through it). */
  private recordMove(clock: ManualClock, accountId: string, target: number): void {
    if (target > clock.now(accountId)) recordClockMove(this.ctx.db, accountId, wallNow(), target);
  }

  private manualClock(): ManualClock {
    const clock = this.clock;
    if (!(clock instanceof ManualClock)) throw clockNotManual();
    return clock;
  }

  /**
   * Runs the account's moments due up to `target`, one after another, in one transaction: at most
   * MOMENTS_PER_COMMIT of them, and no more once `budgetMs` of wall time has gone (a commit per
   * moment would cost more than the moment's work — a 7-day advance stops ~340 times — while one
   * transaction for a long advance would hold the write lock throughout). Returns whether moments
   * due by `target` remain.
   */
  private advanceSlice(clock: ManualClock, accountId: string, target: number, budgetMs: number): boolean {
    let next = this.nextEventAt(accountId);
    if (next === null || next > target) return false;
    const elapsed = stopwatch();
    try {
      this.ctx.db.transaction(() => {
        for (let n = 0; n < MOMENTS_PER_COMMIT && next !== null && next <= target; n++) {
          this.moveClock(clock, accountId, next);
          this.runUntilIdle(accountId);
          next = this.nextEventAt(accountId);
          if (elapsed() >= budgetMs) break;
        }
      });
    } catch (err) {
      // The group rolled back, its clock writes included, while the clock has moved on: persist
      // it now, before any request stamps a row with it (or, if even that fails, at the next pass).
      this.unsavedClocks.set(accountId, clock.now(accountId));
      try {
        this.saveClocks(this.ctx.db);
        this.unsavedClocks.clear();
      } catch {
        // left to the next pass
      }
      throw err;
    }
    return next !== null && next <= target;
  }

  /** An account's advances run one after another; different accounts' run side by side. */
  private readonly advancing = new Map<string, Promise<unknown>>();

  /**
   * The advance clients ask for (POST /_emulator/clock/advance): the caller's account's time
   * moves; answers once everything of that account due up to the new time has happened. However
   * long the advance, the server keeps answering: moments run in slices of at most SLICE_MS of
   * work, with other requests let through between them (a one-year advance over 100 endpoints had
   * held the process for 53 s). With a driver whose effects take real time (processes), each
   * moment's effects are performed and finalized before time moves past it, so what a moment
   * starts (a server stopping, a config applied) is done at that moment's time, and what it lets
   * proceed (a waiting operation) proceeds then too.
   */
  advanceSettled(accountId: string, seconds: number): Promise<number> {
    const clock = this.manualClock();
    const run = (this.advancing.get(accountId) ?? Promise.resolve())
      .catch(() => {})
      .then(async () => {
        const target = clock.now(accountId) + Math.round(seconds * 1000);
        this.recordMove(clock, accountId, target);
        if (this.driver.inline) {
          this.runUntilIdle(accountId);
          let sinceCheckpoint = stopwatch();
          while (this.advanceSlice(clock, accountId, target, SLICE_MS)) {
            // What the slices wrote goes back into the database file every CHECKPOINT_MS: left to
            // pile up, the WAL crossed its checkpoint backstop mid-advance and a commit then copied
            // 40 MB while every request waited (~130 ms). After every slice, the checkpoints' fsyncs
            // made a 7-day advance ~30 % slower.
            if (sinceCheckpoint() >= CHECKPOINT_MS) {
              checkpointWal(this.ctx.db);
              sinceCheckpoint = stopwatch();
            }
            await yieldToOthers();
          }
        } else {
          await this.settleNow(accountId);
          for (
            let next = this.nextEventAt(accountId);
            next !== null && next <= target;
            next = this.nextEventAt(accountId)
          ) {
            this.moveClock(clock, accountId, next);
            await this.settleNow(accountId);
          }
        }
        this.moveClock(clock, accountId, target);
        await this.settleNow(accountId);
        return clock.now(accountId);
      });
    this.advancing.set(accountId, run);
    void run
      .catch(() => {})
      .finally(() => {
        if (this.advancing.get(accountId) === run) this.advancing.delete(accountId);
      });
    return run;
  }

  /**
   * Moves an account's manual time. The new time is persisted by the pass that runs at it, in the
   * same transaction as the rows it stamps (see pass()).
   */
  private moveClock(clock: ManualClock, accountId: string, ms: number): void {
    clock.set(accountId, ms);
    this.unsavedClocks.set(accountId, clock.now(accountId));
  }

  /** Runs everything due at the scope's time and waits for the effects it starts, until nothing moves. */
  private async settleNow(scope: Scope): Promise<void> {
    for (;;) {
      this.runUntilIdle(scope);
      if (this.inflight.size === 0) return;
      await this.drain();
    }
  }

  /** Real clock: a loop that sleeps until the next due moment (at most a second). Manual: nothing runs on its own. */
  start(): void {
    if (this.clock.mode !== "real" || this.running) return;
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  /**
   * Something changed that may give the worker work. Nothing a write starts is due before the
   * shortest operation takes, so the loop is woken for that moment unless it already runs sooner:
   * a burst of writes costs one pass, not one each. (A write that makes an auto-suspend due at
   * once, e.g. a shorter suspend_timeout_seconds, is seen at that moment too, within the shortest
   * operation's time.)
   */
  notify(): void {
    if (!this.running) return;
    const now = this.clock.now(null);
    const at = now + this.shortestOperationMs;
    if (at < this.timerAt) this.schedule(at - now);
  }

  private schedule(delay: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = this.clock.now(null) + delay;
    this.timer = setTimeout(() => this.tick(), delay);
    this.timer.unref?.();
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    if (!this.running) return;
    let delay = MAX_SLEEP_MS;
    try {
      // One pass: whatever it leaves due (an operation promoted and due at once) the next tick takes.
      this.pass(null);
      const next = this.nextEventAt(null);
      if (next !== null) delay = Math.min(MAX_SLEEP_MS, Math.max(MIN_SLEEP_MS, next - this.clock.now(null)));
    } catch (err) {
      this.logger?.error({ err }, "worker step failed; retrying");
    }
    if (this.running) this.schedule(delay);
  }
}
