import type { Tx } from "../../platform/db.js";
import { statement } from "../../platform/statements.js";

export type Metric = "connections" | "logical_size";

export interface Sample {
  minute: number;
  peak: number;
  last: number;
}

const MINUTE = 60_000;

/** Records a value of a metric at `at`: the minute's peak rises to it, its last value becomes it. */
export function recordSample(
  tx: Tx,
  s: { accountId: string; projectId: string; subjectId: string; metric: Metric; at: number; value: number },
): void {
  statement(
    tx,
    `INSERT INTO metric_samples (account_id, project_id, subject_id, metric, minute, peak, last)
     VALUES (@accountId, @projectId, @subjectId, @metric, @minute, @value, @value)
     ON CONFLICT (subject_id, metric, minute) DO UPDATE SET peak = max(peak, excluded.peak), last = excluded.last`,
  ).run({ ...s, minute: Math.floor(s.at / MINUTE) * MINUTE });
}

/** A subject's samples of a metric from `from` to `to`, with the last one before `from` (the value the window opens with). */
export function samplesIn(tx: Tx, subjectId: string, metric: Metric, from: number, to: number): Sample[] {
  const before = statement<Sample>(
    tx,
    `SELECT minute, peak, last FROM metric_samples
      WHERE subject_id = @subjectId AND metric = @metric AND minute < @from ORDER BY minute DESC LIMIT 1`,
  ).get({ subjectId, metric, from });
  const within = statement<Sample>(
    tx,
    `SELECT minute, peak, last FROM metric_samples
      WHERE subject_id = @subjectId AND metric = @metric AND minute >= @from AND minute < @to ORDER BY minute`,
  ).all({ subjectId, metric, from, to });
  return before ? [before, ...within] : within;
}

/** Active intervals of an endpoint's compute overlapping [from, to) (an open one ends at `to`). */
export function activeIntervals(
  tx: Tx,
  endpointId: string,
  from: number,
  to: number,
): { start: number; end: number }[] {
  return statement<{ start: number; end: number }>(
    tx,
    `SELECT max(started_at, @from) AS start, min(coalesce(ended_at, @to), @to) AS end FROM compute_activity
      WHERE endpoint_id = @endpointId AND started_at < @to AND coalesce(ended_at, @to) > @from ORDER BY started_at`,
  ).all({ endpointId, from, to });
}

/** Samples older than `before`, in batches: the write lock is held for a moment only. */
export function pruneSamples(tx: Tx, accountId: string | null, before: number, batch: number): number {
  return statement(
    tx,
    `DELETE FROM metric_samples WHERE rowid IN (
       SELECT rowid FROM metric_samples WHERE minute < @before${accountId === null ? "" : " AND account_id = @accountId"}
       LIMIT ${batch})`,
  ).run({ before, accountId }).changes;
}
