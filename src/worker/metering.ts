import type { Logger } from "pino";
import type { WalMeter } from "../compute/postgres/driver.js";
import type { Ctx } from "../context.js";
import {
  type Counted,
  recordTransfer,
  recordWal,
  type WalMeasure,
} from "../control-plane/consumption/meter.js";
import { recordHistory } from "../control-plane/consumption/storage.js";
import { suspendProjectEndpoints } from "../control-plane/endpoints/service.js";
import { recordTraffic } from "../control-plane/endpoints/store.js";
import { quotaUsedUp } from "../control-plane/limits.js";
import { writtenQuotaPrimaries } from "../control-plane/projects/store.js";
import type { EgressMeter } from "../front-door/egress.js";
import { wallNow } from "../platform/clock.js";
import type { Tx } from "../platform/db.js";

/** How often the bytes the front door sent are recorded. */
const TRANSFER_EVERY_MS = 1000;
/** How often the primaries clients used are asked where their WAL ends (a stop measures it too). */
const WAL_EVERY_MS = 10_000;

/** Measures running primaries' WAL, reporting to the metering's `wal` (the Postgres driver). */
export interface WalSource {
  measureWal(endpointIds: Iterable<string>): Promise<void>;
}

/**
 * Records what computes move (consumption/meter.ts): every second, the bytes the front door sent
 * to clients; every ten, the WAL written by the primaries that sent clients bytes meanwhile, and
 * by those of projects with a written_data_bytes quota (the driver reports the WAL of a primary
 * that stops, and around copies, itself). A project whose data quota (settings.quota:
 * data_transfer_bytes, written_data_bytes) the new bytes use up has its computes suspended in the
 * same transaction, as the time quotas do at the worker's pass. The driver also reports what the
 * branches' histories hold (after each stop of a primary and each pruning round).
 */
export class Metering implements WalMeter {
  private timer: NodeJS.Timeout | undefined;
  private walAt = wallNow();
  private walRound: Promise<void> | undefined;
  /** Endpoints clients used since the last WAL round. */
  private readonly used = new Set<string>();

  constructor(
    private readonly ctx: Ctx,
    private readonly egress: EgressMeter,
    private readonly walSource: WalSource,
    /** Operations were created (suspends): the worker has work. */
    private readonly notify: () => void,
    private readonly logger?: Logger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => this.tick(), TRANSFER_EVERY_MS);
    this.timer.unref();
  }

  /** Stops, recording what was counted and waiting for a WAL round under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.recordTransfer();
    await this.walRound;
  }

  private tick(): void {
    this.recordTransfer();
    if (this.walRound || wallNow() - this.walAt < WAL_EVERY_MS) return;
    this.walAt = wallNow();
    const endpoints = new Set(this.used);
    this.used.clear();
    try {
      for (const id of writtenQuotaPrimaries(this.ctx.db)) endpoints.add(id);
    } catch (err) {
      this.logger?.error({ err }, "metering: could not read the projects with a written data quota");
    }
    if (endpoints.size === 0) return;
    this.walRound = this.walSource
      .measureWal(endpoints)
      .catch((err) => this.logger?.error({ err }, "metering: could not measure the computes' WAL"))
      .finally(() => {
        this.walRound = undefined;
      });
  }

  /** A measure of a branch's WAL (consumption/meter.ts WalMeasure), from the driver. */
  wal(branchId: string, measure: WalMeasure, lsn: string | null): void {
    this.record((tx) => {
      const counted = recordWal(tx, branchId, measure, lsn, (accountId) => this.ctx.clock.now(accountId));
      return counted ? [counted] : [];
    });
  }

  /** What a project's histories hold (consumption/storage.ts), from the driver. */
  history(projectId: string, bytes: ReadonlyMap<string, number>): void {
    try {
      this.ctx.db.transaction((tx) =>
        recordHistory(tx, projectId, bytes, (accountId) => this.ctx.clock.now(accountId)),
      );
    } catch (err) {
      // Bookkeeping: the next measure (a stop, the next pruning round) records it.
      this.logger?.error({ err }, "metering: could not record the branches' history");
    }
  }

  private recordTransfer(): void {
    const moved = this.egress.take();
    if (!moved.length) return;
    // Every answer is bytes sent: the endpoints that sent some are those whose clients may have written.
    for (const m of moved) this.used.add(m.endpointId);
    const now = (accountId: string) => this.ctx.clock.now(accountId);
    const recorded = this.record((tx) => {
      for (const m of moved) recordTraffic(tx, m.endpointId, now);
      return recordTransfer(tx, moved, now);
    });
    // Not recorded (a busy database): counted again with the next second's.
    if (!recorded) for (const m of moved) this.egress.add(m, m.bytes);
  }

  /**
   * Records, then suspends the computes of the counted projects whose quota is now used up. False
   * when it could not be recorded.
   */
  private record(work: (tx: Tx) => readonly Counted[]): boolean {
    try {
      const suspended = this.ctx.db.transaction((tx) => {
        let ops = 0;
        for (const { projectId, accountId } of work(tx))
          if (quotaUsedUp(tx, projectId, this.ctx.clock.now(accountId)))
            ops += suspendProjectEndpoints(this.ctx, tx, projectId).length;
        return ops;
      });
      if (suspended) this.notify();
      return true;
    } catch (err) {
      // The counts are bookkeeping: a busy database delays or loses a record, never ends the process.
      this.logger?.error({ err }, "metering: could not record the computes' traffic");
      return false;
    }
  }
}
