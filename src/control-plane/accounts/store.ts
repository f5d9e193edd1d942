import { eq, sql } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { prepared } from "../../platform/statements.js";
import { accounts } from "./table.js";

export type AccountRow = typeof accounts.$inferSelect;

export function getAccount(tx: Tx, id: string): AccountRow {
  const row = prepared(tx, "accounts.get", () =>
    tx
      .select()
      .from(accounts)
      .where(eq(accounts.id, sql.placeholder("id")))
      .prepare(),
  ).get({ id });
  if (!row) throw new Error(`account ${id} is missing`);
  return row;
}

export function findDefaultAccount(tx: Tx): AccountRow | undefined {
  return tx.select().from(accounts).where(eq(accounts.isDefault, true)).get();
}

export function insertAccount(tx: Tx, row: AccountRow): void {
  tx.insert(accounts).values(row).run();
}

export function setPlan(tx: Tx, id: string, plan: AccountRow["plan"]): void {
  tx.update(accounts).set({ plan }).where(eq(accounts.id, id)).run();
}

export function setSpendingLimit(tx: Tx, id: string, cents: number | null): void {
  tx.update(accounts).set({ spendingLimitCents: cents }).where(eq(accounts.id, id)).run();
}
