/**
 * Consumption history, computed from what happened: compute time from the recorded active
 * periods of every compute (deleted ones too) times the size each ran at; storage from the
 * branches' logical sizes (as last measured) over the time they existed; public network transfer
 * and written data from the metered bytes (consumption/meter.ts: what the front door sent to
 * clients, the WAL the primaries wrote); instant restore storage from the WAL root branches'
 * histories held, hour by hour, and snapshot storage from each snapshot's bytes over the time it
 * was kept (consumption/storage.ts). Private network transfer (the emulator has no private
 * networking) answers 0.
 */
import { createHash } from "node:crypto";
import type { Ctx } from "../../context.js";
import { badRequest, forbidden, notAcceptable, notFound } from "../../errors.js";
import { PLANS } from "../../plans.js";
import { iso } from "../../platform/clock.js";
import type { Tx } from "../../platform/db.js";
import { type AccountRow, getAccount } from "../accounts/store.js";
import { HOUR_MS, type MeterRow, trafficIn } from "./meter.js";
import {
  BRANCH_METRICS,
  floorTo,
  type Granularity,
  listParam,
  type Metric,
  next,
  overlap,
  timeframesOf,
  V2_METRICS,
  windowOf,
} from "./rules.js";
import { type HistorySample, historyIn, type SnapshotSpan, snapshotsIn } from "./storage.js";
import {
  type ActivityRow,
  accountProjectsNewestFirst,
  activityIn,
  type BranchSizeRow,
  branchSizes,
} from "./store.js";

export interface HistoryQuery {
  from: string;
  to: string;
  granularity: Granularity;
  org_id?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
  project_ids?: string | string[] | undefined;
  branch_ids?: string | string[] | undefined;
  metrics?: string | string[] | undefined;
}

/** Branches a paid plan includes per project before extra branch-months count. */
const INCLUDED_BRANCHES = 10;

interface Frame {
  start: number;
  end: number;
}

function checkAccess(ctx: Ctx, accountId: string, orgId: string | undefined, what: string) {
  const account = getAccount(ctx.db, accountId);
  if (orgId !== undefined && orgId !== account.orgId) throw notFound(`organization ${orgId} not found`);
  if (!PLANS[account.plan].consumptionHistory)
    throw forbidden(`${what} is not available on the free plan; it needs a paid plan`);
  return account;
}

function window(ctx: Ctx, accountId: string, q: HistoryQuery) {
  const from = Date.parse(q.from);
  const to = Date.parse(q.to);
  if (Number.isNaN(from)) throw badRequest("invalid query parameter: from: must be an ISO 8601 date-time");
  if (Number.isNaN(to)) throw badRequest("invalid query parameter: to: must be an ISO 8601 date-time");
  const w = windowOf(from, to, q.granularity, ctx.clock.now(accountId));
  if ("invalid" in w) throw badRequest(w.invalid);
  if ("outside" in w) throw notAcceptable(w.outside);
  return w;
}

function metricsOf(q: HistoryQuery, allowed: readonly Metric[]): Metric[] {
  const asked = listParam(q.metrics);
  if (asked.length === 0)
    throw badRequest(`invalid query parameter: metrics: name one or more of ${allowed.join(", ")}`);
  for (const m of asked)
    if (!(allowed as readonly string[]).includes(m))
      throw badRequest(`invalid query parameter: metrics: ${m} is not one of ${allowed.join(", ")}`);
  return [...new Set(asked)] as Metric[];
}

/** A stable UUID for an account's billing period. */
function periodId(accountId: string, periodStart: number): string {
  const h = createHash("sha256").update(`${accountId}:${periodStart}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const activeMs = (rows: readonly ActivityRow[], frame: Frame, now: number) =>
  rows.reduce((sum, r) => sum + overlap({ start: r.startedAt, end: r.endedAt ?? now }, frame), 0);
const cuMs = (rows: readonly ActivityRow[], frame: Frame, now: number) =>
  rows.reduce((sum, r) => sum + overlap({ start: r.startedAt, end: r.endedAt ?? now }, frame) * r.cu, 0);
const alive = (b: BranchSizeRow, frame: Frame) => b.createdAt < frame.end;
/** Bytes of the hours in a timeframe (timeframes start and end on whole hours). */
const trafficSum = (rows: readonly MeterRow[], frame: Frame, figure: "transferBytes" | "writtenBytes") =>
  rows.reduce((sum, r) => (r.hour >= frame.start && r.hour < frame.end ? sum + r[figure] : sum), 0);
/** The length of the calendar month (billing period) a timeframe is in. */
const monthOf = (frame: Frame) => {
  const start = floorTo(frame.start, "monthly");
  return next(start, "monthly") - start;
};
/** The plan a period shows: the subscription's name without its version (`scale_v3` → `scale`). */
const periodPlan = (account: AccountRow) => PLANS[account.plan].subscriptionType.replace(/_v\d+$/, "");
/** Byte-months: a size held over part of a month. */
const byteMonths = (branches: readonly BranchSizeRow[], frame: Frame) => {
  const month = monthOf(frame);
  return branches.reduce(
    (sum, b) =>
      sum + (b.logicalSize * overlap({ start: b.createdAt, end: Number.POSITIVE_INFINITY }, frame)) / month,
    0,
  );
};

/**
 * Where the history measure `i` (of measures by branch, then hour) stops holding: its branch's
 * next measure, or `last` for the branch's last one.
 */
const heldUntil = (samples: readonly HistorySample[], i: number, last: number) => {
  const after = samples[i + 1];
  return after && after.branchId === samples[i]?.branchId ? after.hour : last;
};

/** Byte-milliseconds of history measures (by branch, then hour) in a frame; the last holds until now. */
const historyByteMs = (samples: readonly HistorySample[], frame: Frame, now: number) => {
  // Nothing counts past now (a deleted branch's 0 is measured from the next hour on).
  const past = { start: frame.start, end: Math.min(frame.end, now) };
  return samples.reduce(
    (sum, s, i) => sum + s.bytes * overlap({ start: s.hour, end: heldUntil(samples, i, now) }, past),
    0,
  );
};

/** The bytes the history measures (by branch, then hour) hold at `at`. */
const historyHeldAt = (samples: readonly HistorySample[], at: number) =>
  samples.reduce(
    (sum, s, i) =>
      s.hour <= at && at < heldUntil(samples, i, Number.POSITIVE_INFINITY) ? sum + s.bytes : sum,
    0,
  );

/** Byte-months of snapshots kept (each until it went or expires, and until now at most). */
const snapshotByteMonths = (spans: readonly SnapshotSpan[], frame: Frame, now: number) => {
  const month = monthOf(frame);
  return spans.reduce(
    (sum, s) =>
      sum + (s.bytes * overlap({ start: s.since, end: Math.min(s.until ?? now, now) }, frame)) / month,
    0,
  );
};

/**
 * A project's storage held from `from` until `now` in byte-hours (the project's
 * `data_storage_bytes_hour` for its consumption period): its branches' logical sizes over the time
 * they existed, as the storage metrics count them, and its root branches' history.
 */
export function storageByteHours(tx: Tx, projectId: string, from: number, now: number): number {
  const frame = { start: from, end: now };
  const data = branchSizes(tx, [projectId]).reduce(
    (sum, b) => sum + b.logicalSize * overlap({ start: b.createdAt, end: now }, frame),
    0,
  );
  return Math.round((data + historyByteMs(historyIn(tx, [projectId], from, now), frame, now)) / HOUR_MS);
}

/** What consumption is computed from, for a project or a branch. */
interface Usage {
  activity: readonly ActivityRow[];
  branches: readonly BranchSizeRow[];
  traffic: readonly MeterRow[];
  /** By branch, then hour. */
  history: readonly HistorySample[];
  snapshots: readonly SnapshotSpan[];
}

/** The usage of the given projects in the window, loaded once for all their timeframes. */
function usageIn(ctx: Ctx, projectIds: readonly string[], w: { from: number; to: number }): Usage {
  return {
    activity: activityIn(ctx.db, projectIds, w.from, w.to),
    branches: branchSizes(ctx.db, projectIds),
    traffic: trafficIn(ctx.db, projectIds, w.from, w.to),
    history: historyIn(ctx.db, projectIds, w.from, w.to),
    snapshots: snapshotsIn(ctx.db, projectIds, w.from, w.to),
  };
}

/** The part of `usage` that is one project's or one branch's. */
function usageOf(usage: Usage, of: { projectId: string } | { branchId: string }): Usage {
  const mine = (r: { projectId: string; branchId?: string; id?: string }) =>
    "projectId" in of ? r.projectId === of.projectId : (r.branchId ?? r.id) === of.branchId;
  return {
    activity: usage.activity.filter(mine),
    branches: usage.branches.filter(mine),
    traffic: usage.traffic.filter(mine),
    history: usage.history.filter(mine),
    // Snapshots are the project's (the branch metrics do not include them).
    snapshots: "projectId" in of ? usage.snapshots.filter(mine) : [],
  };
}

function metricValue(metric: Metric, usage: Usage, frame: Frame, now: number): number {
  const { activity, branches, traffic } = usage;
  switch (metric) {
    case "public_network_transfer_bytes":
      // Every client of the emulator's front door comes over its public network.
      return trafficSum(traffic, frame, "transferBytes");
    case "compute_unit_seconds":
      return Math.round(cuMs(activity, frame, now) / 1000);
    case "root_branch_bytes_month":
      return Math.round(
        byteMonths(
          branches.filter((b) => b.root),
          frame,
        ),
      );
    case "child_branch_bytes_month":
      return Math.round(
        byteMonths(
          branches.filter((b) => !b.root),
          frame,
        ),
      );
    case "extra_branches_month": {
      const month = monthOf(frame);
      const extra = Math.max(0, branches.filter((b) => alive(b, frame)).length - INCLUDED_BRANCHES);
      return Math.round((extra * (frame.end - frame.start)) / month);
    }
    case "instant_restore_bytes_month":
      return Math.round(historyByteMs(usage.history, frame, now) / monthOf(frame));
    case "snapshot_storage_bytes_month":
      return Math.round(snapshotByteMonths(usage.snapshots, frame, now));
    case "private_network_transfer_bytes":
      return 0; // the emulator has no private networking
  }
}

/** Periods with their timeframes, each timeframe described by `describe`. */
function periodsOf<T>(
  accountId: string,
  plan: string,
  w: { from: number; to: number },
  q: HistoryQuery,
  now: number,
  describe: (frame: Frame) => T,
) {
  return [...timeframesOf(w, q.granularity)].map(([start, frames]) => {
    const end = next(start, "monthly");
    return {
      period_id: periodId(accountId, start),
      period_plan: plan,
      period_start: iso(start),
      ...(end <= now ? { period_end: iso(end) } : {}),
      consumption: frames.map((f) => ({
        timeframe_start: iso(f.start),
        timeframe_end: iso(f.end),
        ...describe(f),
      })),
    };
  });
}

/** The page of project ids: the account's (or those named), newest first, after the cursor. */
function projectPage(ctx: Ctx, accountId: string, q: HistoryQuery, defaultLimit: number) {
  const named = new Set(listParam(q.project_ids));
  if (named.size > 100) throw badRequest("invalid query parameter: project_ids: at most 100");
  const all = accountProjectsNewestFirst(ctx.db, accountId)
    .map((p) => p.id)
    .filter((id) => named.size === 0 || named.has(id));
  let start = 0;
  if (q.cursor !== undefined) {
    const at = all.indexOf(q.cursor);
    if (at < 0) throw badRequest(`cursor "${q.cursor}" is not valid (use pagination.cursor)`);
    start = at + 1;
  }
  const limit = q.limit ?? defaultLimit;
  const page = all.slice(start, start + limit);
  const last = page[page.length - 1];
  return { page, cursor: last !== undefined && start + limit < all.length ? last : undefined };
}

/** The projects of a page, each with its periods; `describe` gives a timeframe's figures. */
function projectHistory<T>(
  ctx: Ctx,
  accountId: string,
  q: HistoryQuery,
  w: { from: number; to: number },
  plan: string,
  describe: (usage: Usage, frame: Frame, now: number) => T,
) {
  const now = ctx.clock.now(accountId);
  const { page, cursor } = projectPage(ctx, accountId, q, 10);
  const usage = usageIn(ctx, page, w);
  return {
    projects: page.map((projectId) => {
      const mine = usageOf(usage, { projectId });
      return {
        project_id: projectId,
        periods: periodsOf(accountId, plan, w, q, now, (f) => describe(mine, f, now)),
      };
    }),
    ...(cursor ? { pagination: { cursor } } : {}),
  };
}

/** GET /consumption_history/projects (v1 metrics). */
export function projectHistoryV1(ctx: Ctx, accountId: string, q: HistoryQuery) {
  const account = checkAccess(ctx, accountId, q.org_id, "Project consumption history");
  const w = window(ctx, accountId, q);
  return projectHistory(
    ctx,
    accountId,
    q,
    w,
    periodPlan(account),
    ({ activity, branches, traffic, history }, f, now) => ({
      active_time_seconds: Math.round(activeMs(activity, f, now) / 1000),
      compute_time_seconds: Math.round(cuMs(activity, f, now) / 1000),
      written_data_bytes: trafficSum(traffic, f, "writtenBytes"),
      // Neon's synthetic storage: the data, and the history kept, at the timeframe's end.
      synthetic_storage_size_bytes:
        branches.filter((b) => alive(b, f)).reduce((s, b) => s + b.logicalSize, 0) +
        historyHeldAt(history, Math.min(f.end, now) - 1),
    }),
  );
}

/** GET /consumption_history/v2/projects. */
export function projectHistoryV2(ctx: Ctx, accountId: string, q: HistoryQuery) {
  const account = checkAccess(ctx, accountId, q.org_id, "Project consumption history");
  const w = window(ctx, accountId, q);
  const metrics = metricsOf(q, V2_METRICS);
  return projectHistory(ctx, accountId, q, w, periodPlan(account), (usage, f, now) => ({
    metrics: metrics.map((m) => ({
      metric_name: m,
      value: metricValue(m, usage, f, now),
    })),
  }));
}

/** GET /consumption_history/v2/branches: per branch of the named projects, ordered by project then branch. */
export function branchHistoryV2(ctx: Ctx, accountId: string, q: HistoryQuery) {
  const account = checkAccess(ctx, accountId, q.org_id, "Branch consumption history");
  const w = window(ctx, accountId, q);
  const metrics = metricsOf(q, BRANCH_METRICS);
  const now = ctx.clock.now(accountId);
  const projectIds = listParam(q.project_ids);
  if (projectIds.length === 0)
    throw badRequest("invalid query parameter: project_ids: name 1 to 100 projects");
  if (projectIds.length > 100) throw badRequest("invalid query parameter: project_ids: at most 100");
  const own = new Set(accountProjectsNewestFirst(ctx.db, accountId).map((p) => p.id));
  for (const id of projectIds) if (!own.has(id)) throw notFound(`project ${id} not found`);
  const named = new Set(listParam(q.branch_ids));
  const all = branchSizes(ctx.db, [...new Set(projectIds)])
    .filter((b) => named.size === 0 || named.has(b.id))
    .sort((a, b) =>
      a.projectId === b.projectId ? (a.id < b.id ? -1 : 1) : a.projectId < b.projectId ? -1 : 1,
    );
  let start = 0;
  if (q.cursor !== undefined) {
    const at = all.findIndex((b) => `${b.projectId}/${b.id}` === q.cursor);
    if (at < 0) throw badRequest(`cursor "${q.cursor}" is not valid (use pagination.cursor)`);
    start = at + 1;
  }
  const limit = q.limit ?? 100;
  const page = all.slice(start, start + limit);
  const last = page[page.length - 1];
  const pageProjects = [...new Set(page.map((b) => b.projectId))];
  const usage = usageIn(ctx, pageProjects, w);
  const plan = periodPlan(account);
  return {
    branches: page.map((branch) => {
      const mine = usageOf(usage, { branchId: branch.id });
      return {
        project_id: branch.projectId,
        branch_id: branch.id,
        periods: periodsOf(accountId, plan, w, q, now, (f) => ({
          metrics: metrics.map((m) => ({
            metric_name: m,
            value: metricValue(m, mine, f, now),
          })),
        })),
      };
    }),
    ...(last && start + limit < all.length ? { pagination: { cursor: `${last.projectId}/${last.id}` } } : {}),
  };
}
