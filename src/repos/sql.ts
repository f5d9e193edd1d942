import Database from "better-sqlite3";
import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { conflict } from "../lib/errors.js";

/**
 * Runs a write and turns a unique-constraint violation into the given 409, so the database's
 * constraints answer a conflict as clearly as the checks made in code before it.
 */
export function uniqueOrConflict<T>(write: () => T, message: () => string): T {
  try {
    return write();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(message());
    throw err;
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return (
    err instanceof Database.SqliteError &&
    (err.code === "SQLITE_CONSTRAINT_UNIQUE" || err.code === "SQLITE_CONSTRAINT_PRIMARYKEY")
  );
}

export function isForeignKeyViolation(err: unknown): boolean {
  return err instanceof Database.SqliteError && err.code === "SQLITE_CONSTRAINT_FOREIGNKEY";
}

/** `column LIKE %text%` with LIKE wildcards in the text taken literally. */
export function contains(column: SQLiteColumn, text: string): SQL {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql`${column} LIKE ${pattern} ESCAPE '\\'`;
}
