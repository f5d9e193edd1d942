import type { Ctx } from "../../context.js";
import { badRequest } from "../../errors.js";
import { requireEndpoint } from "../access.js";
import { activeIntervals, type Sample, samplesIn } from "./store.js";

/** The windows the charts offer, in milliseconds. */
export const WINDOWS = { "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000 } as const;
export type WindowName = keyof typeof WINDOWS;

export interface EndpointMonitoring {
  from: number;
  to: number;
  /** When the compute was active (every other moment of the window it was idle or stopped). */
  active: { start: number; end: number }[];
  /** Open connections, per minute: the peak and the count at the minute's end. */
  connections: Sample[];
  /** The branch's measured data size, per minute it was measured. */
  logicalSize: Sample[];
}

/**
 * What the console charts of one compute over the window that ends at the account's now (or since
 * the compute was made, if later): its
 * active intervals, its open connections and its branch's data size.
 */
export function endpointMonitoring(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  endpointId: string,
  window: string,
): EndpointMonitoring {
  if (!Object.hasOwn(WINDOWS, window))
    throw badRequest(`window must be one of ${Object.keys(WINDOWS).join(", ")}`);
  const endpoint = requireEndpoint(ctx.db, accountId, projectId, endpointId);
  const to = ctx.clock.now(accountId);
  // A compute younger than the window is charted from its creation.
  const from = Math.max(to - WINDOWS[window as WindowName], Math.min(endpoint.createdAt, to - 60_000));
  return {
    from,
    to,
    active: activeIntervals(ctx.db, endpoint.id, from, to),
    connections: samplesIn(ctx.db, endpoint.id, "connections", from, to),
    logicalSize: samplesIn(ctx.db, endpoint.branchId, "logical_size", from, to),
  };
}
