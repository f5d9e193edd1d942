/**
 * The clock every piece of code reads time from. Nothing else calls Date.now().
 * - real: wall time.
 * - manual: time only moves when advanced; the value is persisted by the owner (see repos/emulator-state).
 */
export interface Clock {
  readonly mode: "real" | "manual";
  now(): number;
}

export class RealClock implements Clock {
  readonly mode = "real" as const;
  now(): number {
    return Date.now();
  }
}

export class ManualClock implements Clock {
  readonly mode = "manual" as const;
  constructor(private current: number) {}
  now(): number {
    return this.current;
  }
  /** Moves time to `ms`; time never goes backwards. */
  set(ms: number): void {
    if (ms > this.current) this.current = ms;
  }
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

/** Wall time, for choosing a manual clock's starting point; everything else reads a Clock. */
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
