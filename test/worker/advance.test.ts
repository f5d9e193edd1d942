import { afterEach, expect, it } from "vitest";
import { manualClockKey, readState } from "../../src/emulator/state-store.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
afterEach(() => t.close());

// An advance commits its moments in groups; a group that fails rolls back as a whole. The clock
// has moved on by then, so the time it reached must be persisted before anything is stamped with
// it: a restart must never resume from a time earlier than the rows.
it("an advance that fails part-way persists the time its clock reached", async () => {
  t = createTestApp();
  expect((await t.api("POST", "/api/v2/projects", { project: {} })).status).toBe(201);
  const nextEventAt = t.worker.nextEventAt.bind(t.worker);
  let calls = 0;
  t.worker.nextEventAt = (scope) => {
    if (++calls === 20) throw new Error("injected failure");
    return nextEventAt(scope);
  };
  expect(() => t.advance(7 * 86400)).toThrow("injected failure");
  expect(t.clock.now()).toBeGreaterThan(Date.parse("2025-01-01T00:00:00Z"));
  expect(readState(t.ctx.db, manualClockKey(t.accountId))).toBe(String(t.clock.now()));
});
