import type { Logger } from "pino";
import type { Ctx } from "../context.js";
import { type Clock, ManualClock } from "../lib/clock.js";
import { ApiError } from "../lib/errors.js";
import { MANUAL_CLOCK_KEY, writeState } from "../repos/emulator-state.js";
import { autoSuspend, finishDue, nextEventAt, promoteScheduled, scheduleChecks } from "./steps.js";

/** How many stops of a manual-clock advance share one commit. */
const MOMENTS_PER_COMMIT = 32;

/** Longest sleep of the real-time loop, so a change made by another process is seen soon. */
const MAX_SLEEP_MS = 1000;

/**
 * Shortest sleep of the real-time loop. Under a steady stream of writes something is always
 * about to be due; waking at most this often lets one pass (one transaction) complete a batch
 * of operations instead of a few, at the price of completing each up to this much late.
 */
const MIN_SLEEP_MS = 20;

/**
 * Advances operations and endpoint states. Each step runs in its own immediate transaction
 * and re-checks the rows it claims, so a crash between steps loses nothing and repeats nothing:
 * on restart, whatever was due simply becomes due again.
 */
export class Worker {
  private timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (clock milliseconds). */
  private timerAt = Number.POSITIVE_INFINITY;
  private running = false;
  private stepping = false;

  private readonly shortestOperationMs: number;

  constructor(
    private readonly ctx: Ctx,
    private readonly logger?: Logger,
  ) {
    this.shortestOperationMs = Math.min(...Object.values(ctx.config.operationMs));
  }

  private get clock(): Clock {
    return this.ctx.clock;
  }

  /** A manual clock's time not yet persisted: the next pass writes it in its own transaction. */
  private unsavedClock: number | undefined;

  /** One pass at the current time: complete, promote, suspend, check. Returns how many rows moved. */
  private pass(): number {
    const now = this.clock.now();
    return this.ctx.db.transaction(
      (tx) => {
        // Persisted with the rows stamped with it, atomically: a crash can never leave rows later
        // than the clock a restart resumes from.
        if (this.unsavedClock !== undefined) writeState(tx, MANUAL_CLOCK_KEY, String(this.unsavedClock));
        const moved =
          finishDue(this.ctx, tx, now) +
          promoteScheduled(this.ctx, tx, now) +
          autoSuspend(this.ctx, tx, now) +
          scheduleChecks(this.ctx, tx, now);
        this.unsavedClock = undefined;
        return moved;
      },
      { behavior: "immediate" },
    );
  }

  /** Runs everything due at the current time until nothing more moves. */
  runUntilIdle(): number {
    if (this.stepping) return 0;
    this.stepping = true;
    try {
      let total = 0;
      for (let moved = this.pass(); moved > 0; moved = this.pass()) total += moved;
      return total;
    } finally {
      this.stepping = false;
    }
  }

  nextEventAt(): number | null {
    return nextEventAt(this.ctx);
  }

  /**
   * Manual clock: moves time forward by `seconds`, stopping at every moment something becomes
   * due so each transition happens at its own time, then persists the new time.
   */
  advance(seconds: number): number {
    const clock = this.clock;
    if (!(clock instanceof ManualClock))
      throw new ApiError(
        409,
        "CLOCK_NOT_MANUAL",
        "the clock is real; start the emulator with NEON_EMULATOR_CLOCK=manual to advance it",
      );
    const target = clock.now() + Math.round(seconds * 1000);
    // Each new time is persisted by the pass that runs at it, in the same transaction as the rows
    // it stamps (see pass()).
    const moveTo = (ms: number) => {
      clock.set(ms);
      this.unsavedClock = clock.now();
    };
    this.runUntilIdle();
    // Moments are committed in groups: a commit per moment would cost more than the moment's
    // work (a 7-day advance stops ~340 times), while a single transaction for the whole advance
    // would hold the write lock for as long as a long advance runs.
    let next = this.nextEventAt();
    while (next !== null && next <= target) {
      try {
        this.ctx.db.transaction(() => {
          for (let n = 0; n < MOMENTS_PER_COMMIT && next !== null && next <= target; n++) {
            moveTo(next);
            this.runUntilIdle();
            next = this.nextEventAt();
          }
        });
      } catch (err) {
        // The group rolled back, its clock writes included, while the clock has moved on: persist
        // it now, before any request stamps a row with it (or, if even that fails, at the next pass).
        this.unsavedClock = clock.now();
        try {
          writeState(this.ctx.db, MANUAL_CLOCK_KEY, String(this.unsavedClock));
          this.unsavedClock = undefined;
        } catch {
          // left to the next pass
        }
        throw err;
      }
    }
    moveTo(target);
    this.runUntilIdle();
    return clock.now();
  }

  /** Real clock: a loop that sleeps until the next due moment (at most a second). Manual: nothing runs on its own. */
  start(): void {
    if (this.clock.mode !== "real" || this.running) return;
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  /**
   * A write created work. Nothing a write starts is due before the shortest operation takes, so
   * the loop is woken for that moment unless it already runs sooner: a burst of writes costs one
   * pass, not one each. (A write that makes an auto-suspend due at once, e.g. a shorter
   * suspend_timeout_seconds, is seen at that moment too, within the shortest operation's time.)
   */
  notify(): void {
    if (!this.running) return;
    const now = this.clock.now();
    const at = now + this.shortestOperationMs;
    if (at < this.timerAt) this.schedule(at - now);
  }

  private schedule(delay: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = this.clock.now() + delay;
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
      this.pass();
      const next = this.nextEventAt();
      if (next !== null) delay = Math.min(MAX_SLEEP_MS, Math.max(MIN_SLEEP_MS, next - this.clock.now()));
    } catch (err) {
      this.logger?.error({ err }, "worker step failed; retrying");
    }
    if (this.running) this.schedule(delay);
  }
}
