import { and, asc, eq, isNotNull, lte, sql } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { backupSchedules, snapshots } from "./table.js";

export type SnapshotRow = typeof snapshots.$inferSelect;

export function insertSnapshot(tx: Tx, row: SnapshotRow): void {
  tx.insert(snapshots).values(row).run();
}

export function findSnapshot(tx: Tx, projectId: string, snapshotId: string): SnapshotRow | undefined {
  return tx
    .select()
    .from(snapshots)
    .where(and(eq(snapshots.id, snapshotId), eq(snapshots.projectId, projectId)))
    .get();
}

/** A project's snapshots, oldest first. */
export function listSnapshotRows(tx: Tx, projectId: string): SnapshotRow[] {
  return tx
    .select()
    .from(snapshots)
    .where(eq(snapshots.projectId, projectId))
    .orderBy(asc(snapshots.createdAt), asc(sql`rowid`))
    .all();
}

export function updateSnapshotRow(tx: Tx, row: SnapshotRow): void {
  tx.update(snapshots).set(row).where(eq(snapshots.id, row.id)).run();
}

export function deleteSnapshotRow(tx: Tx, snapshotId: string): void {
  tx.delete(snapshots).where(eq(snapshots.id, snapshotId)).run();
}

/** Deletes the project's snapshots expired by `now` that `deletable` lets go; returns their ids. */
export function deleteExpiredSnapshots(
  tx: Tx,
  projectId: string,
  now: number,
  deletable: (snapshotId: string) => boolean,
): string[] {
  const expired = tx
    .select({ id: snapshots.id })
    .from(snapshots)
    .where(
      and(eq(snapshots.projectId, projectId), isNotNull(snapshots.expiresAt), lte(snapshots.expiresAt, now)),
    )
    .all()
    .map((s) => s.id)
    .filter(deletable);
  for (const id of expired) deleteSnapshotRow(tx, id);
  return expired;
}

export function findSchedule(tx: Tx, branchId: string): Record<string, unknown>[] | undefined {
  return tx.select().from(backupSchedules).where(eq(backupSchedules.branchId, branchId)).get()?.schedule;
}

export function saveSchedule(tx: Tx, row: typeof backupSchedules.$inferInsert): void {
  tx.insert(backupSchedules)
    .values(row)
    .onConflictDoUpdate({
      target: backupSchedules.branchId,
      set: { schedule: row.schedule, updatedAt: row.updatedAt },
    })
    .run();
}
