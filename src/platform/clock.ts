/**
 * The clock every piece of code reads time from. Nothing else calls Date.now().
 * - real: wall time, the same for every account.
 * - manual: each account has its own time, which moves only when that account advances it (so
 *   suites taking one account each do not see each other's transitions); an account that never
 *   advanced stands at the emulator's base time. Persisted by its owners (runtime.ts, the worker).
 * `now(accountId)` is the time of that account; `now(null)` the base time, for what belongs to no
 * account.
 */
export interface Clock {
  readonly mode: "real" | "manual";
  now(accountId: string | null): number;
}

export class RealClock implements Clock {
  readonly mode = "real" as const;
  now(_accountId?: string | null): number {
    return Date.now();
  }
}

export class ManualClock implements Clock {
  readonly mode = "manual" as const;
  private readonly accounts = new Map<string, number>();
  constructor(
    private readonly base: number,
    accounts: Iterable<[string, number]> = [],
  ) {
    for (const [id, ms] of accounts) this.accounts.set(id, Math.max(ms, base));
  }
  now(accountId: string | null): number {
    return accountId === null ? this.base : (this.accounts.get(accountId) ?? this.base);
  }
  /** Moves an account's time to `ms`; time never goes backwards. */
  set(accountId: string, ms: number): void {
    if (ms > this.now(accountId)) this.accounts.set(accountId, ms);
  }
  /** An account that is gone (or emptied and started over) keeps its time: nothing to do. */
}

export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

/** Microsecond timestamps (operation created_at) rendered with six fractional digits. */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = String(us % 1_000_000).padStart(6, "0");
  return `${base}.${frac}Z`;
}

/** Parses an ISO timestamp with up to microsecond precision back to microseconds; null when invalid. */
export function parseIsoMicros(text: string): number | null {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(text);
  if (!m) return null;
  const seconds = Date.parse(`${m[1]}Z`);
  if (Number.isNaN(seconds)) return null;
  const frac = (m[2] ?? "").padEnd(6, "0").slice(0, 6);
  return seconds * 1000 + Number(frac);
}

/**
 * Wall time, for choosing a manual clock's starting point and for what is set against the
 * computes' own clock (Postgres stamps commits with wall time: where a branch's history begins,
 * when a manual clock's advance began); everything else reads a Clock.
 */
export function wallNow(): number {
  return Date.now();
}

/**
 * A stopwatch on the process's monotonic time, for cutting long work into slices that let other
 * requests through; never a source of domain time (that is a Clock's).
 */
export function stopwatch(): () => number {
  const start = performance.now();
  return () => performance.now() - start;
}

/**
 * What `work` resolves to, or `otherwise` once `ms` pass first (the work goes on; its timer is
 * cleared either way, so it never holds the process open).
 */
export async function within<T, U>(work: Promise<T>, ms: number, otherwise: U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<U>((resolve) => {
    timer = setTimeout(() => resolve(otherwise), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
