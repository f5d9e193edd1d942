/**
 * Bytes the front door sends to clients from each endpoint's compute once they are logged in: what
 * Neon's proxy meters as egress (`record_egress` in its passthrough and SQL over HTTP). Relays add
 * to a counter per endpoint, with no call per chunk; the worker's metering job takes the counts.
 */

/** One endpoint's counter: relays add to `bytes` as they write to their client. */
export interface EgressCounter {
  bytes: number;
}

interface Entry extends EgressCounter {
  endpointId: string;
  projectId: string;
  branchId: string;
  /** Client connections holding the counter. */
  holders: number;
  /** Whether bytes moved or a holder came since the last take. */
  touched: boolean;
}

/** What moved for one endpoint since the last take. */
export interface EgressTaken {
  endpointId: string;
  projectId: string;
  branchId: string;
  bytes: number;
}

export interface Compute {
  endpointId: string;
  projectId: string;
  branchId: string;
}

export class EgressMeter {
  private readonly entries = new Map<string, Entry>();

  /** The endpoint's counter, held by one client connection until `release`. */
  hold(compute: Compute): EgressCounter {
    const entry = this.entry(compute);
    entry.holders++;
    entry.touched = true;
    return entry;
  }

  release(counter: EgressCounter): void {
    (counter as Entry).holders--;
  }

  /** Bytes of one answer (SQL over HTTP). */
  add(compute: Compute, bytes: number): void {
    const entry = this.entry(compute);
    entry.bytes += bytes;
    entry.touched = true;
  }

  /**
   * The bytes counted since the last take, and the endpoints clients used meanwhile (held
   * connections, or any answer). Counters no connection holds and nothing touched are dropped.
   */
  take(): { moved: EgressTaken[]; used: Set<string> } {
    const moved: EgressTaken[] = [];
    const used = new Set<string>();
    for (const [id, e] of this.entries) {
      if (e.bytes > 0)
        moved.push({ endpointId: id, projectId: e.projectId, branchId: e.branchId, bytes: e.bytes });
      if (e.touched || e.holders > 0) used.add(id);
      else this.entries.delete(id);
      e.bytes = 0;
      e.touched = false;
    }
    return { moved, used };
  }

  private entry(compute: Compute): Entry {
    let entry = this.entries.get(compute.endpointId);
    if (!entry) {
      entry = { ...compute, bytes: 0, holders: 0, touched: false };
      this.entries.set(compute.endpointId, entry);
    }
    return entry;
  }
}
