import type { Logger } from "pino";
import type { Ctx } from "../context.js";
import { type Counted, recordTransfer, recordWal } from "../control-plane/consumption/meter.js";
import { suspendProjectEndpoints } from "../control-plane/endpoints/service.js";
import { quotaUsedUp } from "../control-plane/limits.js";
import type { EgressMeter } from "../front-door/egress.js";
import { wallNow } from "../platform/clock.js";
import type { Tx } from "../platform/db.js";

/** How often the bytes the front door sent are recorded. */
const TRANSFER_EVERY_MS = 1000;
/** How often the primaries clients used are asked where their WAL ends (a stop measures it too). */
const WAL_EVERY_MS = 10_000;

/** Where running primaries' WAL ends (the Postgres driver's measureWal). */
export interface WalSource {
  measureWal(endpointIds: Iterable<string>, record: (branchId: string, lsn: string) => void): Promise<void>;
}

/**
 * Records what computes move (consumption/meter.ts): every second, the bytes the front door sent
 * to clients; every ten, the WAL written by the primaries clients used meanwhile. A project whose
 * data quota (settings.quota: data_transfer_bytes, written_data_bytes) the new bytes use up has its
 * computes suspended in the same transaction, as the time quotas do at the worker's pass.
 */
export class Metering {
  private timer: NodeJS.Timeout | undefined;
  private walAt = wallNow();
  private walRound: Promise<void> | undefined;
  /** Endpoints clients used since the last WAL round. */
  private readonly used = new Set<string>();

  constructor(
    private readonly ctx: Ctx,
    private readonly egress: EgressMeter,
    private readonly wal: WalSource,
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
    if (this.walRound || this.used.size === 0 || wallNow() - this.walAt < WAL_EVERY_MS) return;
    const endpoints = [...this.used];
    this.used.clear();
    this.walAt = wallNow();
    this.walRound = this.wal
      .measureWal(endpoints, (branchId, lsn) =>
        this.record((tx) => {
          const counted = recordWal(tx, branchId, lsn, false, (accountId) => this.ctx.clock.now(accountId));
          return counted ? [counted] : [];
        }),
      )
      .catch((err) => this.logger?.error({ err }, "metering: could not measure the computes' WAL"))
      .finally(() => {
        this.walRound = undefined;
      });
  }

  private recordTransfer(): void {
    const { moved, used } = this.egress.take();
    for (const id of used) this.used.add(id);
    if (moved.length)
      this.record((tx) => recordTransfer(tx, moved, (accountId) => this.ctx.clock.now(accountId)));
  }

  /** Records, then suspends the computes of the counted projects whose quota is now used up. */
  private record(work: (tx: Tx) => readonly Counted[]): void {
    try {
      const suspended = this.ctx.db.transaction((tx) => {
        let ops = 0;
        for (const { projectId, accountId } of work(tx))
          if (quotaUsedUp(tx, projectId, this.ctx.clock.now(accountId)))
            ops += suspendProjectEndpoints(this.ctx, tx, projectId).length;
        return ops;
      });
      if (suspended) this.notify();
    } catch (err) {
      // The counts are bookkeeping: a busy database loses this record, never the process.
      this.logger?.error({ err }, "metering: could not record the computes' traffic");
    }
  }
}
