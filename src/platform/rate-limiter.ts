/**
 * Request rate limits as Neon documents them for its API: a number of requests per minute per
 * account, and per second per route of an account. Counted in memory on wall time (whatever the
 * emulator's clock), in one-second buckets: the minute is the last 60 of them.
 */
export interface RateLimits {
  perMinute: number;
  perRoutePerSecond: number;
}

/** Neon's published limits: 700 requests per minute, bursts of 40 per second on one route. */
export const NEON_RATE_LIMITS: RateLimits = { perMinute: 700, perRoutePerSecond: 40 };

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; reason: string };

interface AccountWindow {
  /** Requests counted in each of the last 60 seconds, by second modulo 60. */
  seconds: Int32Array;
  /** The second each slot of `seconds` counts. */
  stamps: Float64Array;
  /** Per route: the second counted and its count. */
  routes: Map<string, { second: number; count: number }>;
}

/** Accounts not seen for this long are forgotten at the next sweep. */
const IDLE_SECONDS = 120;

export class RateLimiter {
  private readonly accounts = new Map<string, AccountWindow>();
  private sweptAt = 0;

  constructor(
    private readonly limits: RateLimits,
    /** Wall time in milliseconds. */
    private readonly now: () => number,
  ) {}

  /** Counts a request of `accountId` on `route` when it is within the limits; says how long to wait when not. */
  take(accountId: string, route: string): RateDecision {
    const second = Math.floor(this.now() / 1000);
    this.sweep(second);
    let window = this.accounts.get(accountId);
    if (!window) {
      window = { seconds: new Int32Array(60), stamps: new Float64Array(60).fill(-1), routes: new Map() };
      this.accounts.set(accountId, window);
    }
    let inMinute = 0;
    let oldest = second;
    for (let i = 0; i < 60; i++) {
      const stamp = window.stamps[i] as number;
      if (stamp > second - 60 && (window.seconds[i] as number) > 0) {
        inMinute += window.seconds[i] as number;
        if (stamp < oldest) oldest = stamp;
      }
    }
    if (inMinute >= this.limits.perMinute)
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, oldest + 60 - second),
        reason: `more than ${this.limits.perMinute} requests per minute`,
      };
    const routeCount = window.routes.get(route);
    const onRoute = routeCount && routeCount.second === second ? routeCount.count : 0;
    if (onRoute >= this.limits.perRoutePerSecond)
      return {
        allowed: false,
        retryAfterSeconds: 1,
        reason: `more than ${this.limits.perRoutePerSecond} requests per second on ${route}`,
      };
    const slot = second % 60;
    if (window.stamps[slot] !== second) {
      window.stamps[slot] = second;
      window.seconds[slot] = 0;
    }
    window.seconds[slot] = (window.seconds[slot] as number) + 1;
    window.routes.set(route, { second, count: onRoute + 1 });
    return { allowed: true };
  }

  /** Forgets accounts idle for two minutes and routes not used this second (memory stays bounded). */
  private sweep(second: number): void {
    if (second - this.sweptAt < IDLE_SECONDS) return;
    this.sweptAt = second;
    for (const [id, window] of this.accounts) {
      let latest = -1;
      for (const stamp of window.stamps) if (stamp > latest) latest = stamp;
      if (latest <= second - IDLE_SECONDS) this.accounts.delete(id);
      else for (const [route, count] of window.routes) if (count.second < second) window.routes.delete(route);
    }
  }
}
