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

/** The manual clock's current time (ms), persisted so it never goes backwards across restarts. */
export const MANUAL_CLOCK_KEY = "clock.manual_ms";
