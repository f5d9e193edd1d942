import type { Db } from "./db/client.js";
import type { IdGenerator } from "./domain/ids.js";
import type { OperationAction } from "./domain/operations.js";
import type { Clock } from "./lib/clock.js";

/** Settings the repositories and worker read; built from the environment by main.ts, or by tests. */
export interface Config {
  plan: "paid" | "free";
  domain: string;
  maxBodyBytes: number;
  operationMs: Record<OperationAction, number>;
  checkIntervalSeconds: number;
}

/** What every repository function receives: storage, time, ids, settings, and a wake-up call for the worker. */
export interface Ctx {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  config: Config;
  /** Called after a transaction that created or changed operations, so a real-time worker looks again. */
  notify(): void;
}
