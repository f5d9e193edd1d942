/**
 * Branches: a new branch's state, the paging cursor of the branch list, and what may be deleted.
 * Pure.
 */
import { badRequest, conflict } from "../../errors.js";
import type { BranchRow } from "../access.js";

export type SortBy = "name" | "created_at" | "updated_at";

/** A new branch: `init` until its create_timeline/create_branch operation finishes. */
export function newBranchRow(args: {
  id: string;
  accountId: string;
  projectId: string;
  now: number;
  name?: string | undefined;
  parentId: string | null;
  isDefault?: boolean | undefined;
  protected?: boolean | undefined;
  annotations?: Record<string, string> | undefined;
  expiresAt?: number | null | undefined;
  /** The branch whose data this one starts from, when not its parent's (a restore's preserved state). */
  dataSource?: string | undefined;
  /** `schema-only`: the schema of dataSource's databases, without their rows. */
  initSource?: "parent-data" | "schema-only" | undefined;
  /** The point of its source's history its data is made from (`lsn:X/X`, `time:<wall ms>`); its head when absent. */
  historyPoint?: string | undefined;
  /** The LSN or time of the parent's history it starts from, when not its parent's head. */
  parentLsn?: string | undefined;
  parentTimestamp?: number | undefined;
  /** When its history begins, when not at its creation (a restore's kept state keeps its past). */
  historySince?: number | undefined;
}): BranchRow {
  const { id, now } = args;
  return {
    id,
    accountId: args.accountId,
    projectId: args.projectId,
    parentId: args.parentId,
    name: args.name ?? id,
    isDefault: args.isDefault ?? false,
    protected: args.protected ?? false,
    currentState: "init",
    pendingState: "ready",
    stateChangedAt: now,
    creationSource: "console",
    // Known when asked for; else once its data is copied (the compute driver reports the LSN).
    parentLsn: args.parentId ? (args.parentLsn ?? null) : null,
    parentTimestamp: args.parentId ? (args.parentTimestamp ?? now) : null,
    logicalSize: 0,
    expiresAt: args.expiresAt ?? null,
    ttlSeconds: ttlOf(args.expiresAt ?? null, now),
    annotations: args.annotations && Object.keys(args.annotations).length ? args.annotations : null,
    dataSource: args.dataSource ?? null,
    initSource: args.initSource ?? "parent-data",
    restoreSource: null,
    lastResetAt: null,
    restoreStatus: null,
    restoredFrom: null,
    restoreTarget: null,
    lastCheckAt: null,
    checkBase: null,
    meteredLsn: null,
    historyPoint: args.historyPoint ?? null,
    historySince: args.historySince ?? now,
    createdAt: now,
    updatedAt: now,
  };
}

/** How far ahead an expiry may be set, as on Neon: 30 days. */
const EXPIRY_MAX_MS = 30 * 24 * 3600 * 1000;

/** A requested `expires_at` (null: none), in the future and at most 30 days ahead, kept to the second as Neon keeps it. */
export function expiryOf(text: string | null | undefined, now: number): number | null {
  if (text === null || text === undefined) return null;
  // Kept to the second, as Neon keeps it, and checked as kept.
  const at = Math.floor(Date.parse(text) / 1000) * 1000;
  if (at <= now) throw badRequest("branch.expires_at must be in the future");
  if (at > now + EXPIRY_MAX_MS)
    throw badRequest(
      `branch.expires_at must be at most 30 days from now (${new Date(now + EXPIRY_MAX_MS).toISOString()})`,
    );
  return at;
}

/**
 * Neon's restrictions on expiring branches: no expiry on a protected or default branch, or one with
 * children (`childId`), and none of those made of an expiring one. `next` is the branch as the
 * change would leave it.
 */
export function checkExpiry(
  next: Pick<BranchRow, "expiresAt" | "protected" | "isDefault"> & { id?: string },
  childId: string | undefined,
): void {
  if (next.expiresAt === null) return;
  const refuse = (why: string) =>
    badRequest(
      `${next.id ? `branch ${next.id}` : "the new branch"} ${why}: an expiring branch cannot be protected, the default branch, or a parent`,
    );
  if (next.protected) throw refuse("would be protected and expire");
  if (next.isDefault) throw refuse("would be the default branch and expire");
  if (childId) throw refuse(`would expire with a child branch (${childId})`);
}

/** The time to live an expiry set at `now` gives (whole seconds), or null for none. */
export function ttlOf(expiresAt: number | null, now: number): number | null {
  return expiresAt === null ? null : Math.round((expiresAt - now) / 1000);
}

export function nameTaken(name: string, projectId: string): string {
  return `a branch named "${name}" already exists in project ${projectId}`;
}

/** No branch is made a child of an expiring branch (a create, a restore from it, a snapshot restored onto it), as on Neon. */
export function checkNotExpiring(parent: Pick<BranchRow, "id" | "expiresAt">): void {
  if (parent.expiresAt !== null)
    throw badRequest(
      `branch ${parent.id} expires (expires_at ${new Date(parent.expiresAt).toISOString()}): no branch can be made from an expiring branch; remove its expiry first`,
    );
}

/** The default branch, a protected branch and a branch with children cannot be deleted. */
export function checkDeletable(branch: BranchRow, childId: string | undefined): void {
  if (branch.isDefault)
    throw conflict(
      `branch ${branch.id} is the project's default branch and cannot be deleted; set another branch as default first`,
    );
  if (branch.protected) throw conflict(`branch ${branch.id} is protected; unprotect it before deleting it`);
  if (childId) throw conflict(`branch ${branch.id} has child branches (e.g. ${childId}); delete them first`);
}

/** The value a branch is sorted by. */
export function sortValue(row: BranchRow, sortBy: SortBy): string | number {
  return sortBy === "name" ? row.name : sortBy === "created_at" ? row.createdAt : row.updatedAt;
}

export function encodeCursor(value: string | number, id: string): string {
  return Buffer.from(JSON.stringify([value, id])).toString("base64url");
}

export function decodeCursor(cursor: string, sortBy: SortBy): [string | number, string] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[1] === "string" &&
      (sortBy === "name" ? typeof parsed[0] === "string" : Number.isInteger(parsed[0]))
    )
      return parsed as [string | number, string];
  } catch {
    // fall through to the error below
  }
  throw badRequest("cursor is not a pagination.next value of this listing (same sort_by and sort_order)");
}
