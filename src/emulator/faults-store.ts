import { and, asc, eq, sql } from "drizzle-orm";
import type { Tx } from "../platform/db.js";
import { prepared, statement } from "../platform/statements.js";
import { faults } from "./table.js";

export type FaultRow = typeof faults.$inferSelect;

export function insertFault(tx: Tx, values: Omit<FaultRow, "id">): FaultRow {
  return tx.insert(faults).values(values).returning().get();
}

export function listAccountFaults(tx: Tx, accountId: string): FaultRow[] {
  return tx.select().from(faults).where(eq(faults.accountId, accountId)).orderBy(asc(faults.id)).all();
}

export function deleteAccountFaults(tx: Tx, accountId: string): number {
  return tx.delete(faults).where(eq(faults.accountId, accountId)).run().changes;
}

/** Whether any fault is armed at all (they are rare: the worker looks for one per operation only then). */
export function anyFaultArmed(tx: Tx): boolean {
  return statement(tx, "SELECT 1 FROM faults LIMIT 1").get() !== undefined;
}

/** Takes one use of the oldest armed fault matching the operation, if any, and returns its message. */
export function takeFault(
  tx: Tx,
  op: { accountId: string; action: string; projectId: string; endpointId: string | null },
): string | null {
  const fault = prepared(tx, "faults.match", () =>
    tx
      .select()
      .from(faults)
      .where(
        and(
          eq(faults.accountId, sql.placeholder("accountId")),
          eq(faults.action, sql.placeholder("action")),
          sql`(${faults.projectId} IS NULL OR ${faults.projectId} = ${sql.placeholder("projectId")})`,
          sql`(${faults.endpointId} IS NULL OR ${faults.endpointId} = ${sql.placeholder("endpointId")})`,
        ),
      )
      .orderBy(asc(faults.id))
      .prepare(),
  ).get({ accountId: op.accountId, action: op.action, projectId: op.projectId, endpointId: op.endpointId });
  if (!fault) return null;
  if (fault.remaining <= 1) tx.delete(faults).where(eq(faults.id, fault.id)).run();
  else
    tx.update(faults)
      .set({ remaining: fault.remaining - 1 })
      .where(eq(faults.id, fault.id))
      .run();
  return fault.message;
}
