import type { BranchReader } from "./compute/driver.js";
import type { OperationAction } from "./control-plane/operations/rules.js";
import type { LimitOverrides, PlanName } from "./plans.js";
import type { Clock } from "./platform/clock.js";
import type { Db } from "./platform/db.js";
import type { IdGenerator } from "./platform/ids.js";
import type { RateLimits } from "./platform/rate-limiter.js";

/** Settings the services and the worker read; built from the environment by runtime.ts, or by tests. */
export interface Config {
  plan: PlanName;
  domain: string;
  maxBodyBytes: number;
  operationMs: Record<OperationAction, number>;
  checkIntervalSeconds: number;
  /** Finished operations older than this many days are removed (Neon: six months); 0 keeps them all. */
  operationRetentionDays: number;
  /**
   * The hash of NEON_EMULATOR_API_KEY, when the emulator runs with one: that key cannot be revoked
   * through the API (the next start would refuse it), so clients cannot lock themselves out.
   */
  startKeyHash?: string;
  /** Overrides of the plans' project, branch and compute limits (NEON_EMULATOR_LIMITS). */
  limits?: LimitOverrides;
  /** Request rate limits on /api/v2 per account (NEON_EMULATOR_RATE_LIMIT=neon); none when absent. */
  rateLimits?: RateLimits;
  /** How long a deleted project can be recovered (Neon: 7 days); 0 deletes at once. */
  projectRecoverySeconds: number;
  /**
   * The Postgres majors that can run, and the command that installs another; null when computes
   * are not real processes (NEON_EMULATOR_COMPUTE=none), where any major 14-18 is accepted.
   */
  postgres?: {
    /** Whether a major can run (looked for again when it is not yet known). */
    has(major: number): boolean;
    installed(): readonly number[];
    installCommand(major: number): string;
  } | null;
  /**
   * Where the Postgres front door listens, once it does (NEON_EMULATOR_COMPUTE=postgres): the
   * connection URIs the API hands out point there. Undefined otherwise (URIs name endpoint hosts).
   */
  frontDoor?: { host: string; port: number; caCert: string };
}

/** What every service receives: storage, time, ids and settings. */
export interface Ctx {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  config: Config;
  /** The branches' real databases, when computes are real; absent with NEON_EMULATOR_COMPUTE=none. */
  branchData?: BranchReader;
  /**
   * Why Postgres `major` would refuse these server settings (its own words), or null: asked of the
   * real binaries when computes are real; absent with NEON_EMULATOR_COMPUTE=none.
   */
  pgSettingsProblem?: (major: number, settings: Record<string, string>) => Promise<string | null>;
}
