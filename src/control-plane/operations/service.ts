import type { Ctx } from "../../context.js";
import { badRequest, notFound } from "../../errors.js";
import { isoMicros, parseIsoMicros } from "../../platform/clock.js";
import type { Tx } from "../../platform/db.js";
import type { JsonText } from "../../platform/json-text.js";
import { projectNotFound, requireProject } from "../access.js";
import { type OperationJson, toOperationJson } from "./render.js";
import { initialStatus, type OperationAction } from "./rules.js";
import {
  findProjectOperation,
  hasUnfinishedBefore,
  insertOperation,
  insertOperations,
  latestCreatedUs,
  type OperationRow,
  readOperationsPage,
} from "./store.js";

export interface NewOperation {
  accountId: string;
  projectId: string;
  branchId: string | null;
  endpointId?: string | null;
  action: OperationAction;
  /** Time before the operation's own duration starts to run (a deletion waits out its recovery window). */
  delayMs?: number;
}

/**
 * The next `created_us` of a project: the clock's time, or one past the project's newest
 * operation, whichever is later, so `created_at` is strictly increasing within a project (the
 * paging cursor is never ambiguous) and runs ahead of the clock only when one project starts more
 * than a thousand operations within one millisecond (a sequence across the whole database had
 * run 6 ms ahead after 6,304 operations made while a manual clock stood still).
 */
function nextCreatedUs(ctx: Ctx, tx: Tx, accountId: string, projectId: string): number {
  return Math.max(ctx.clock.now(accountId) * 1000, latestCreatedUs(tx, projectId) + 1);
}

/**
 * Records an operation inside the caller's transaction. It starts `running` unless an earlier
 * operation on its endpoint is unfinished, in which case it waits as `scheduling` for the worker
 * to promote it (rules.ts: initialStatus).
 */
export function startOperation(ctx: Ctx, tx: Tx, input: NewOperation): OperationRow {
  const now = ctx.clock.now(input.accountId);
  const createdUs = nextCreatedUs(ctx, tx, input.accountId, input.projectId);
  const endpointId = input.endpointId ?? null;
  const status = initialStatus(endpointId !== null && hasUnfinishedBefore(tx, endpointId, createdUs));
  const running = status === "running";
  const row: OperationRow = {
    id: ctx.ids.uuid(),
    accountId: input.accountId,
    projectId: input.projectId,
    branchId: input.branchId,
    endpointId,
    action: input.action,
    status,
    failuresCount: 0,
    error: null,
    createdUs,
    updatedAt: now,
    dueAt: running ? now + (input.delayMs ?? 0) + ctx.config.operationMs[input.action] : null,
    startedAt: running ? now : null,
    totalDurationMs: 0,
    claim: null,
  };
  insertOperation(tx, row);
  return row;
}

/**
 * Records operations that nothing can block (they have no endpoint, so they start `running`) in
 * one statement, each project's in input order with consecutive `created_us`: the periodic checks
 * start one per branch at the same moment.
 */
export function startUnblockedOperations(
  ctx: Ctx,
  tx: Tx,
  action: OperationAction,
  inputs: readonly Omit<NewOperation, "endpointId" | "action">[],
): number {
  if (inputs.length === 0) return 0;
  const nextOf = new Map<string, number>();
  const take = (accountId: string, projectId: string) => {
    const us = nextOf.get(projectId) ?? nextCreatedUs(ctx, tx, accountId, projectId);
    nextOf.set(projectId, us + 1);
    return us;
  };
  return insertOperations(
    tx,
    inputs.map((input) => {
      const now = ctx.clock.now(input.accountId);
      return {
        id: ctx.ids.uuid(),
        accountId: input.accountId,
        projectId: input.projectId,
        branchId: input.branchId,
        endpointId: null,
        action,
        status: "running",
        failuresCount: 0,
        error: null,
        createdUs: take(input.accountId, input.projectId),
        updatedAt: now,
        dueAt: now + ctx.config.operationMs[action],
        startedAt: now,
        totalDurationMs: 0,
        claim: null,
      };
    }),
  );
}

export interface OperationPage {
  operations: OperationJson[];
  pagination?: { cursor: string } | undefined;
}

/**
 * A page of a project's operations, newest first, below the cursor (a `created_at` with
 * microseconds), as the JSON text of the response: one statement checks the project and renders
 * the page.
 */
export function listOperations(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  query: { limit?: number | undefined; cursor?: string | undefined },
): JsonText<OperationPage> {
  const limit = query.limit ?? 10;
  let before = Number.MAX_SAFE_INTEGER;
  if (query.cursor !== undefined) {
    const parsed = parseIsoMicros(query.cursor);
    if (parsed === null)
      throw badRequest(
        `cursor must be a pagination.cursor value from a previous page (got "${query.cursor}")`,
      );
    before = parsed;
  }
  const page = readOperationsPage(ctx.db, accountId, projectId, before, limit);
  if (!page?.found) throw projectNotFound(projectId);
  // Without a row, the cursor sent stays the cursor: the end of the list.
  const cursor = page.lastUs !== null ? isoMicros(page.lastUs) : query.cursor;
  return `{"operations":[${page.items ?? ""}]${
    cursor === undefined ? "" : `,"pagination":{"cursor":${JSON.stringify(cursor)}}`
  }}` as JsonText<OperationPage>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function getOperation(ctx: Ctx, accountId: string, projectId: string, operationId: string) {
  requireProject(ctx.db, accountId, projectId);
  if (!UUID.test(operationId)) throw badRequest(`operation_id must be a UUID (got "${operationId}")`);
  const row = findProjectOperation(ctx.db, projectId, operationId.toLowerCase());
  if (!row) throw notFound(`operation ${operationId} not found in project ${projectId}`);
  return { operation: toOperationJson(row) };
}
