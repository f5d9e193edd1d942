import { and, asc, eq, sql } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { projectJwks } from "./table.js";

export type JwksRow = typeof projectJwks.$inferSelect;

export function insertJwks(tx: Tx, row: JwksRow): void {
  tx.insert(projectJwks).values(row).run();
}

export function listJwks(tx: Tx, projectId: string): JwksRow[] {
  return tx
    .select()
    .from(projectJwks)
    .where(eq(projectJwks.projectId, projectId))
    .orderBy(asc(projectJwks.createdAt), sql`rowid`)
    .all();
}

export function countJwks(tx: Tx, projectId: string): number {
  return listJwks(tx, projectId).length;
}

export function findJwks(tx: Tx, projectId: string, id: string): JwksRow | undefined {
  return tx
    .select()
    .from(projectJwks)
    .where(and(eq(projectJwks.projectId, projectId), eq(projectJwks.id, id)))
    .get();
}

export function deleteJwks(tx: Tx, id: string): void {
  tx.delete(projectJwks).where(eq(projectJwks.id, id)).run();
}
