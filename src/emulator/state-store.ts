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

/** The longest history a project may keep (history_retention_seconds' maximum): advances older than it are forgotten. */
const CLOCK_MOVES_KEPT_MS = 2_592_000_000;

/** An advance of an account's manual clock begins (wall time `wallMs`), moving it to `toMs`. */
export function recordClockMove(tx: Tx, accountId: string, wallMs: number, toMs: number): void {
  statement(
    tx,
    "INSERT INTO clock_moves (account_id, wall_ms, to_ms) VALUES (@accountId, @wallMs, @toMs)",
  ).run({
    accountId,
    wallMs,
    toMs,
  });
  statement(tx, "DELETE FROM clock_moves WHERE account_id = @accountId AND to_ms < @oldest").run({
    accountId,
    oldest: toMs - CLOCK_MOVES_KEPT_MS,
  });
}

/**
 * The account's manual time at wall time `wallMs`: where the last advance begun by then moved it
 * (an advance's own stops on the way are not recorded); with no advance recorded, `unmoved` (the
 * clock never moved); undefined when the advances recorded all began later (older ones forgotten).
 */
export function manualTimeAt(tx: Tx, accountId: string, wallMs: number, unmoved: number): number | undefined {
  const moved = statement<{ to: number }>(
    tx,
    'SELECT to_ms AS "to" FROM clock_moves WHERE account_id = @accountId AND wall_ms <= @wallMs ORDER BY wall_ms DESC, id DESC LIMIT 1',
  ).get({ accountId, wallMs });
  if (moved) return moved.to;
  const any = statement<{ n: number }>(
    tx,
    "SELECT 1 AS n FROM clock_moves WHERE account_id = @accountId LIMIT 1",
  ).get({
    accountId,
  });
  return any ? undefined : unmoved;
}

/**
 * The wall time at which an account's manual clock moved past `ms` (the first advance to a later
 * time), or undefined when it has not yet (or no advance past it is recorded).
 */
export function wallTimeOf(tx: Tx, accountId: string, ms: number): number | undefined {
  return statement<{ wall: number }>(
    tx,
    "SELECT wall_ms AS wall FROM clock_moves WHERE account_id = @accountId AND to_ms > @ms ORDER BY to_ms, id LIMIT 1",
  ).get({ accountId, ms })?.wall;
}
