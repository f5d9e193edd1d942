/**
 * Bytes the front door sends to clients from each endpoint's compute once they are logged in: what
 * Neon's proxy meters as egress (`record_egress` in its passthrough and SQL over HTTP). Relays add
 * to a counter per endpoint, with no call per chunk; the worker's metering job takes the counts.
 */

/** One endpoint's counter: relays add to `bytes` as they write to their client. */
export interface EgressCounter {
  bytes: number;
}

/** An endpoint with its branch and project. */
export interface Compute {
  endpointId: string;
  projectId: string;
  branchId: string;
}

/** What moved for one endpoint since the last take. */
export interface EgressTaken extends Compute {
  bytes: number;
}

interface Entry extends EgressCounter, Compute {
  /** Client connections holding the counter. */
  holders: number;
}

/**
 * Counters by endpoint and branch (an endpoint moved to another branch counts there for the
 * clients that log in after the move).
 */
export class EgressMeter {
  private readonly entries = new Map<string, Entry>();

  /** The endpoint's counter, held by one client connection until `release`. */
  hold(compute: Compute): EgressCounter {
    const entry = this.entry(compute);
    entry.holders++;
    return entry;
  }

  release(counter: EgressCounter): void {
    (counter as Entry).holders--;
  }

  /** Bytes of one answer (SQL over HTTP); also what a record that failed gives back. */
  add(compute: Compute, bytes: number): void {
    this.entry(compute).bytes += bytes;
  }

  /** The bytes counted since the last take; counters no connection holds and nothing moved are dropped. */
  take(): EgressTaken[] {
    const moved: EgressTaken[] = [];
    for (const [key, e] of this.entries) {
      if (e.bytes > 0)
        moved.push({
          endpointId: e.endpointId,
          projectId: e.projectId,
          branchId: e.branchId,
          bytes: e.bytes,
        });
      else if (e.holders === 0) this.entries.delete(key);
      e.bytes = 0;
    }
    return moved;
  }

  private entry(compute: Compute): Entry {
    const key = `${compute.endpointId}/${compute.branchId}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { ...compute, bytes: 0, holders: 0 };
      this.entries.set(key, entry);
    }
    return entry;
  }
}
