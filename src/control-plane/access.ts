/**
 * The lookups every request makes on its way down account -> project -> branch -> endpoint, with
 * their answers: 404 for an unknown id or another account's (never 403), 423 for a change to a
 * locked project. One place for each message.
 */
import { and, eq, sql } from "drizzle-orm";
import { locked, notFound } from "../errors.js";
import type { Tx } from "../platform/db.js";
import { prepared, statement } from "../platform/statements.js";
import { type AccountRow, getAccount } from "./accounts/store.js";
import { branches } from "./branches/table.js";
import { endpoints } from "./endpoints/table.js";
import { UNFINISHED_OPERATION_SQL } from "./operations/rules.js";
import { projects } from "./projects/table.js";

export type ProjectRow = typeof projects.$inferSelect;
export type BranchRow = typeof branches.$inferSelect;
export type EndpointRow = typeof endpoints.$inferSelect;

export const projectNotFound = (projectId: string) => notFound(`project ${projectId} not found`);
/** Clients retry a 423. */
export const projectLocked = (projectId: string) => locked(`project ${projectId} is locked; retry later`);
export const branchNotFound = (projectId: string, branchId: string) =>
  notFound(`branch ${branchId} not found in project ${projectId}`);
export const endpointNotFound = (projectId: string, endpointId: string) =>
  notFound(`endpoint ${endpointId} not found in project ${projectId}`);

/** The account's organization (each account has one); any other id is not found, as for every other account's objects. */
export function requireOrganization(tx: Tx, accountId: string, orgId: string): AccountRow {
  const account = getAccount(tx, accountId);
  if (account.orgId !== orgId) throw notFound(`organization ${orgId} not found`);
  return account;
}

export function findProject(tx: Tx, accountId: string, projectId: string): ProjectRow | undefined {
  return prepared(tx, "access.project", () =>
    tx
      .select()
      .from(projects)
      .where(
        and(
          eq(projects.id, sql.placeholder("projectId")),
          eq(projects.accountId, sql.placeholder("accountId")),
        ),
      )
      .prepare(),
  ).get({ projectId, accountId });
}

/** The project, if it exists and belongs to the account. */
export function requireProject(tx: Tx, accountId: string, projectId: string): ProjectRow {
  const row = findProject(tx, accountId, projectId);
  if (!row) throw projectNotFound(projectId);
  return row;
}

/** As requireProject, for changes: a locked project answers 423. */
export function requireWritableProject(tx: Tx, accountId: string, projectId: string): ProjectRow {
  const row = requireProject(tx, accountId, projectId);
  if (row.locked) throw projectLocked(projectId);
  return row;
}

/** The branch, if it belongs to the project and the account (the project itself is not checked). */
export function requireBranch(tx: Tx, accountId: string, projectId: string, branchId: string): BranchRow {
  const row = prepared(tx, "access.branch", () =>
    tx
      .select()
      .from(branches)
      .where(
        and(
          eq(branches.id, sql.placeholder("branchId")),
          eq(branches.projectId, sql.placeholder("projectId")),
          eq(branches.accountId, sql.placeholder("accountId")),
        ),
      )
      .prepare(),
  ).get({ branchId, projectId, accountId });
  if (!row) throw branchNotFound(projectId, branchId);
  return row;
}

/** Neon's answer to a change that would run beside an operation it conflicts with; clients retry it. */
export const conflictingOperations = () =>
  locked("project already has running conflicting operations, scheduling of new ones is prohibited");

/**
 * As requireBranch, for a change to the branch itself or to its roles and databases: while the
 * branch is still being created (its create_branch or create_timeline is unfinished) the change
 * answers 423, as on Neon, and a client retries it once the operation is done.
 */
export function requireSettledBranch(
  tx: Tx,
  accountId: string,
  projectId: string,
  branchId: string,
): BranchRow {
  const row = requireBranch(tx, accountId, projectId, branchId);
  if (branchBeingMade(tx, branchId)) throw conflictingOperations();
  return row;
}

/** Whether the branch's data is being made or replaced (its create_branch or create_timeline unfinished). */
export function branchBeingMade(tx: Tx, branchId: string): boolean {
  return (
    statement(
      tx,
      `SELECT 1 FROM operations WHERE ${UNFINISHED_OPERATION_SQL} AND branch_id = @branchId
       AND action IN ('create_branch', 'create_timeline') LIMIT 1`,
    ).get({ branchId }) !== undefined
  );
}

/**
 * A branch whose data a restore is replacing (accepted, its create_branch unfinished): a branch made
 * from it, or a read of its schema, answers 423 until the restore is done, rather than copy or read
 * what the restore is throwing away.
 */
export function requireNotBeingRestored(tx: Tx, branch: BranchRow): BranchRow {
  if (branch.restoreSource !== null && branchBeingMade(tx, branch.id)) throw conflictingOperations();
  return branch;
}

/**
 * Whether a restore of one of the project's branches is under way: the branch already names its
 * new source while its data is still the old (a project deleted and recovered meanwhile would keep
 * it so, its operations gone with the deletion).
 */
export function projectRestoring(tx: Tx, projectId: string): boolean {
  return (
    statement(
      tx,
      `SELECT 1 FROM operations o JOIN branches b ON b.id = o.branch_id
        WHERE o.project_id = @projectId AND ${UNFINISHED_OPERATION_SQL}
          AND o.action = 'create_branch' AND b.restore_source IS NOT NULL LIMIT 1`,
    ).get({ projectId }) !== undefined
  );
}

/** A branch by id alone (its account and project with it), for work that is not a client's request. */
export function findBranchById(tx: Tx, branchId: string): BranchRow | undefined {
  return tx.select().from(branches).where(eq(branches.id, branchId)).get();
}

/** A read of a branch: its project first (404 for the project before the branch). */
export function readBranch(tx: Tx, accountId: string, projectId: string, branchId: string): BranchRow {
  requireProject(tx, accountId, projectId);
  return requireBranch(tx, accountId, projectId, branchId);
}

export function findEndpoint(
  tx: Tx,
  accountId: string,
  projectId: string,
  endpointId: string,
): EndpointRow | undefined {
  return prepared(tx, "access.endpoint", () =>
    tx
      .select()
      .from(endpoints)
      .where(
        and(
          eq(endpoints.id, sql.placeholder("endpointId")),
          eq(endpoints.projectId, sql.placeholder("projectId")),
          eq(endpoints.accountId, sql.placeholder("accountId")),
        ),
      )
      .prepare(),
  ).get({ endpointId, projectId, accountId });
}

export function requireEndpoint(
  tx: Tx,
  accountId: string,
  projectId: string,
  endpointId: string,
): EndpointRow {
  const row = findEndpoint(tx, accountId, projectId, endpointId);
  if (!row) throw endpointNotFound(projectId, endpointId);
  return row;
}
