import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let mainId: string;
let endpointId: string;
beforeEach(async () => {
  t = createTestApp();
  const res = await t.api("POST", "/api/v2/projects", { project: { name: "p" } });
  projectId = res.body.project.id;
  mainId = res.body.branch.id;
  endpointId = res.body.endpoints[0].id;
  t.advance(2); // the branch is made and its compute active
});
afterEach(() => t.close());

const p = () => `/api/v2/projects/${projectId}`;
const names = (list: { name: string }[]) => list.map((x) => x.name).sort();

async function snapshot(query = "") {
  const res = await t.api("POST", `${p()}/branches/${mainId}/snapshot${query}`);
  expectStatus(res, 200);
  return res.body.snapshot;
}

describe("snapshots", () => {
  it("of a branch deleted since: a restore without target_branch_id says so and names the parameter", async () => {
    const dev = await t.api("POST", `${p()}/branches`, { branch: { name: "dev" } });
    t.advance(1);
    const taken = await t.api("POST", `${p()}/branches/${dev.body.branch.id}/snapshot`);
    expectStatus(taken, 200);
    expectStatus(await t.api("DELETE", `${p()}/branches/${dev.body.branch.id}`), 200);
    const restore = await t.api("POST", `${p()}/snapshots/${taken.body.snapshot.id}/restore`, {});
    expectStatus(restore, 404);
    expect(restore.body.message).toContain(`(${dev.body.branch.id}) no longer exists`);
    expect(restore.body.message).toContain("target_branch_id");
    const onto = await t.api("POST", `${p()}/snapshots/${taken.body.snapshot.id}/restore`, {
      target_branch_id: mainId,
    });
    expectStatus(onto, 200);
  });

  it("are taken of a branch, listed, renamed, given an expiry that removes them, and deleted", async () => {
    const taken = await t.api("POST", `${p()}/branches/${mainId}/snapshot?name=before-migration`);
    expectStatus(taken, 200);
    expect(taken.body).toEqual({
      snapshot: expect.objectContaining({
        id: expect.stringMatching(/^snap-/),
        name: "before-migration",
        source_branch_id: mainId,
        manual: true,
        created_at: expect.any(String),
      }),
      operations: [],
    });
    const id = taken.body.snapshot.id;
    const renamed = await t.api("PATCH", `${p()}/snapshots/${id}`, {
      snapshot: { name: "renamed", expires_at: new Date(t.clock.now() + 3_600_000).toISOString() },
    });
    expectStatus(renamed, 200);
    expect(renamed.body.snapshot).toMatchObject({ name: "renamed", expires_at: expect.any(String) });
    const other = await snapshot();
    expect((await t.api("GET", `${p()}/snapshots`)).body.snapshots.map((s: { id: string }) => s.id)).toEqual([
      id,
      other.id,
    ]);
    t.advance(7200);
    expect((await t.api("GET", `${p()}/snapshots`)).body.snapshots.map((s: { id: string }) => s.id)).toEqual([
      other.id,
    ]);
    expectStatus(await t.api("PATCH", `${p()}/snapshots/${id}`, { snapshot: { name: "x" } }), 404);
    const deleted = await t.api("DELETE", `${p()}/snapshots/${other.id}`);
    expectStatus(deleted, 202);
    expect(deleted.body).toEqual({ operations: [] });
    expect((await t.api("GET", `${p()}/snapshots`)).body.snapshots).toEqual([]);
    expectStatus(await t.api("DELETE", `${p()}/snapshots/${other.id}`), 404);
  });

  it("refuses a time before the branch's history, a past expiry, a branch still being created, and unknown branches", async () => {
    const pitr = await t.api("POST", `${p()}/branches/${mainId}/snapshot?timestamp=2024-12-31T00:00:00Z`);
    expectStatus(pitr, 400);
    expect(pitr.body.message).toContain(
      `timestamp 2024-12-31T00:00:00Z is before branch ${mainId}'s history begins`,
    );
    const both = await t.api(
      "POST",
      `${p()}/branches/${mainId}/snapshot?timestamp=2025-01-01T00:00:00Z&lsn=0/1`,
    );
    expectStatus(both, 400);
    const past = await t.api("POST", `${p()}/branches/${mainId}/snapshot?expires_at=2000-01-01T00:00:00Z`);
    expectStatus(past, 400);
    expect(past.body.message).toContain("expires_at must be in the future");
    const dev = await t.api("POST", `${p()}/branches`, { branch: { name: "dev" } });
    expectStatus(await t.api("POST", `${p()}/branches/${dev.body.branch.id}/snapshot`), 423);
    expectStatus(await t.api("POST", `${p()}/branches/br-nope-12345678/snapshot`), 404);
    expect((await t.api("GET", `${p()}/snapshots`)).body.snapshots).toEqual([]);
  });

  it("restore to a new branch with the snapshot's roles; finalize makes it take the branch's place and computes", async () => {
    const snap = await snapshot("?name=s1");
    expectStatus(await t.api("POST", `${p()}/branches/${mainId}/roles`, { role: { name: "later" } }), 201);
    t.advance(1);
    const restored = await t.api("POST", `${p()}/snapshots/${snap.id}/restore`, { name: "from-s1" });
    expectStatus(restored, 200);
    const id = restored.body.branch.id;
    expect(restored.body.branch).toMatchObject({
      name: "from-s1",
      parent_id: mainId,
      restore_status: "restored",
      restored_from: snap.id,
      current_state: "init",
    });
    expect(restored.body.operations.map((o: { action: string }) => o.action)).toEqual(["create_branch"]);
    expect(names((await t.api("GET", `${p()}/branches/${id}/roles`)).body.roles)).toEqual(["neondb_owner"]);
    t.advance(1);
    // A protected branch is not replaced (a reset): 409 until it is unprotected.
    expectStatus(await t.api("PATCH", `${p()}/branches/${mainId}`, { branch: { protected: true } }), 200);
    const guarded = await t.api("POST", `${p()}/branches/${id}/finalize_restore`, { name: "main-before" });
    expectStatus(guarded, 409);
    expect(guarded.body.message).toContain("is protected and cannot be replaced by a restore");
    expectStatus(await t.api("PATCH", `${p()}/branches/${mainId}`, { branch: { protected: false } }), 200);

    const finalized = await t.api("POST", `${p()}/branches/${id}/finalize_restore`, { name: "main-before" });
    expectStatus(finalized, 200);
    expect(finalized.body.operations.map((o: { action: string }) => o.action)).toEqual([
      "suspend_compute",
      "start_compute",
    ]);
    const branch = (await t.api("GET", `${p()}/branches/${id}`)).body.branch;
    expect(branch).toMatchObject({
      name: "main",
      default: true,
      restore_status: "finalized",
      restored_as: mainId,
    });
    expect((await t.api("GET", `${p()}/branches/${mainId}`)).body.branch).toMatchObject({
      name: "main-before",
      default: false,
    });
    // The compute (and so its connection string) moved to the restored branch.
    expect((await t.api("GET", `${p()}/endpoints/${endpointId}`)).body.endpoint.branch_id).toBe(id);
    const again = await t.api("POST", `${p()}/branches/${id}/finalize_restore`);
    expectStatus(again, 400);
    expect(again.body.message).toContain("finalized already");
    expectStatus(await t.api("POST", `${p()}/branches/${mainId}/finalize_restore`), 400);
  });

  it("restore with finalize_restore replaces the target at once; an unknown snapshot is 404", async () => {
    const snap = await snapshot();
    const res = await t.api("POST", `${p()}/snapshots/${snap.id}/restore`, { finalize_restore: true });
    expectStatus(res, 200);
    expect(res.body.branch).toMatchObject({ name: "main", restore_status: "finalized", default: true });
    expect(names((await t.api("GET", `${p()}/branches`)).body.branches)).toEqual([
      "main",
      expect.stringMatching(/^main_old_\d{8}T\d{6}Z$/),
    ]);
    expectStatus(await t.api("POST", `${p()}/snapshots/snap-nope-12345678/restore`), 404);
  });
});

describe("backup schedules", () => {
  it("are empty until set, stored as given, and validated", async () => {
    const url = `${p()}/branches/${mainId}/backup_schedule`;
    expect((await t.api("GET", url)).body).toEqual({ schedule: [] });
    const schedule = [
      { frequency: "daily", hour: 3, retention_seconds: 7 * 86400 },
      { frequency: "weekly", day: 1, hour: 4 },
    ];
    const set = await t.api("PUT", url, { schedule });
    expectStatus(set, 200);
    expect(set.body).toEqual({});
    expect((await t.api("GET", url)).body).toEqual({ schedule });
    expectStatus(await t.api("PUT", url, { schedule: [{ frequency: "secondly" }] }), 400);
    expectStatus(await t.api("PUT", url, { schedule: [{ frequency: "daily", hour: 24 }] }), 400);
    expectStatus(await t.api("GET", `${p()}/branches/br-nope-12345678/backup_schedule`), 404);
  });
});
