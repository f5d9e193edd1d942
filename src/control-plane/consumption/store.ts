import type { Tx } from "../../platform/db.js";
import { statement } from "../../platform/statements.js";

export interface ActivityRow {
  projectId: string;
  branchId: string;
  cu: number;
  startedAt: number;
  endedAt: number | null;
}

/** Active periods of the given projects' computes that touch [from, to). */
export function activityIn(tx: Tx, projectIds: readonly string[], from: number, to: number): ActivityRow[] {
  return statement<ActivityRow>(
    tx,
    `SELECT project_id AS projectId, branch_id AS branchId, cu, started_at AS startedAt, ended_at AS endedAt
       FROM compute_activity
      WHERE project_id IN (SELECT value FROM json_each(@ids)) AND started_at < @to
        AND (ended_at IS NULL OR ended_at > @from)`,
  ).all({ ids: JSON.stringify(projectIds), from, to });
}

export interface BranchSizeRow {
  id: string;
  projectId: string;
  root: number;
  logicalSize: number;
  createdAt: number;
}

/** The given projects' branches with their logical size (as last measured) and creation time. */
export function branchSizes(tx: Tx, projectIds: readonly string[]): BranchSizeRow[] {
  return statement<BranchSizeRow>(
    tx,
    `SELECT id, project_id AS projectId, parent_id IS NULL AS root, logical_size AS logicalSize,
            created_at AS createdAt
       FROM branches WHERE project_id IN (SELECT value FROM json_each(@ids))
      ORDER BY project_id, id`,
  ).all({ ids: JSON.stringify(projectIds) });
}

/** The account's projects, newest first (the order consumption pages in). */
export function accountProjectsNewestFirst(tx: Tx, accountId: string): { id: string }[] {
  return statement<{ id: string }>(
    tx,
    "SELECT id FROM projects WHERE account_id = @accountId ORDER BY created_at DESC, id DESC",
  ).all({ accountId });
}
