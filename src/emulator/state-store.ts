import { eq } from "drizzle-orm";
import type { Tx } from "../platform/db.js";
import { statement } from "../platform/statements.js";
import { emulatorState } from "./table.js";

export function readState(tx: Tx, key: string): string | undefined {
  return tx.select({ value: emulatorState.value }).from(emulatorState).where(eq(emulatorState.key, key)).get()
    ?.value;
}

/** Raw and prepared once: a manual-clock advance writes the clock at every moment it stops. */
export function writeState(tx: Tx, key: string, value: string): void {
  statement(
    tx,
    "INSERT INTO emulator_state (key, value) VALUES (@key, @value) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  ).run({ key, value });
}

/**
 * The manual clock's base time (ms): the time of every account that has not advanced its own,
 * persisted so it never goes backwards across restarts.
 */
export const MANUAL_CLOCK_KEY = "clock.manual_ms";

/** An account's own manual time (ms), once it has advanced it; never goes backwards either. */
export function manualClockKey(accountId: string): string {
  return `${MANUAL_CLOCK_KEY}.${accountId}`;
}

/** Every account's persisted manual time. */
export function readAccountClocks(tx: Tx): [string, number][] {
  const prefix = `${MANUAL_CLOCK_KEY}.`;
  return statement<{ key: string; value: string }>(
    tx,
    "SELECT key, value FROM emulator_state WHERE key > @prefix AND key < @end",
  )
    .all({ prefix, end: `${prefix}\uffff` })
    .map((r) => [r.key.slice(prefix.length), Number(r.value)] as [string, number])
    .filter(([, ms]) => Number.isFinite(ms));
}
