import { eq } from "drizzle-orm";
import type { Db, Tx } from "../db/client.js";
import { emulatorState } from "../db/schema/index.js";

export function readState(tx: Tx | Db, key: string): string | undefined {
  return tx.select({ value: emulatorState.value }).from(emulatorState).where(eq(emulatorState.key, key)).get()
    ?.value;
}

export function writeState(tx: Tx | Db, key: string, value: string): void {
  tx.insert(emulatorState)
    .values({ key, value })
    .onConflictDoUpdate({ target: emulatorState.key, set: { value } })
    .run();
}

export const MANUAL_CLOCK_KEY = "clock.manual_ms";
