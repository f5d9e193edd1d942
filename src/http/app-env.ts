import type { Ctx } from "../context.js";
import type { Principal } from "../control-plane/api-keys/service.js";
import type { EventSink } from "../platform/events.js";

/** What middleware puts on every request for the routes (Hono's context variables). */
export interface AppEnv {
  Variables: {
    ctx: Ctx;
    /** Where a route hands the events of the service it called (runtime.ts: the worker). */
    events: EventSink;
    /** The manual clock's advance (the worker's): moves time and runs everything that becomes due. */
    /** Moves an account's manual time (each account has its own). */
    advanceClock: (accountId: string, seconds: number) => number | Promise<number>;
    principal: Principal;
    requestId: string;
  };
}
