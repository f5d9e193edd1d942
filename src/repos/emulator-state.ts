import { eq } from "drizzle-orm";
import type { Db, Tx } from "../db/client.js";
import { emulatorState } from "../db/schema/index.js";
import { statement } from "../lib/prepared.js";

export function readState(tx: Tx | Db, key: string): string | undefined {
  return tx.select({ value: emulatorState.value }).from(emulatorState).where(eq(emulatorState.key, key)).get()
    ?.value;
}

/** Raw and prepared once: a manual-clock advance writes the clock at every moment it stops. */
export function writeState(tx: Tx | Db, key: string, value: string): void {
  statement(
    tx,
    "INSERT INTO emulator_state (key, value) VALUES (@key, @value) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  ).run({ key, value });
}

export const MANUAL_CLOCK_KEY = "clock.manual_ms";
