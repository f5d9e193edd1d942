import Database from "better-sqlite3";
import { getTableColumns, getTableName, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { conflict } from "../errors.js";
import type { Tx } from "./db.js";
import { connectionOf, prepared } from "./statements.js";

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

/** `column LIKE %text%` with LIKE wildcards in the text taken literally. */
export function contains(column: SQLiteColumn, text: string): SQL {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql`${column} LIKE ${pattern} ESCAPE '\\'`;
}

/**
 * Inserts one whole row through a Drizzle insert prepared once per connection, with a placeholder
 * for every column of the table: what buys the speed of a hand-written INSERT (no SQL build and no
 * SQLite compile per row). Values are encoded as Drizzle encodes them in a plain insert (JSON
 * text, 0/1 booleans, null kept as NULL). The row is the table's full select type, so a column
 * added to the table is a type error until every caller supplies it, and a missing value throws:
 * never silently left out.
 */
export function insertRow<T extends SQLiteTable>(tx: Tx, table: T, row: T["$inferSelect"]): void {
  const columns = Object.entries(getTableColumns(table));
  const name = getTableName(table);
  const statement = prepared(tx, `insertRow:${name}`, () => {
    // Raw placeholders: a Drizzle placeholder bound to a column would encode a JSON null as 'null'.
    const values = Object.fromEntries(columns.map(([key]) => [key, sql`${sql.placeholder(key)}`]));
    return tx
      .insert(table)
      .values(values as T["$inferInsert"])
      .prepare();
  });
  const params: Record<string, unknown> = {};
  for (const [key, column] of columns) {
    const value = (row as Record<string, unknown>)[key];
    if (value === undefined) throw new Error(`insertRow(${name}): no value for column ${key}`);
    params[key] = value === null ? null : column.mapToDriverValue(value);
  }
  statement.run(params);
}

/**
 * Inserts many whole rows in one statement: the rows travel as one JSON array bound to a single
 * parameter and SQLite's json_each spreads them over the columns. What it buys: one prepared
 * statement per batch instead of one execution per row (the worker's periodic checks start an
 * operation for every branch with an endpoint at the same moment). Values are encoded as insertRow
 * encodes them; rows keep their order (json_each's `key`).
 */
export function insertRows<T extends SQLiteTable>(
  tx: Tx,
  table: T,
  rows: readonly T["$inferSelect"][],
): number {
  if (rows.length === 0) return 0;
  const columns = Object.entries(getTableColumns(table));
  const name = getTableName(table);
  const statement = prepared(tx, `insertRows:${name}`, () =>
    (connectionOf(tx) as Database.Database).prepare(
      `INSERT INTO "${name}" (${columns.map(([, c]) => `"${c.name}"`).join(", ")})
       SELECT ${columns.map((_, i) => `value ->> ${i}`).join(", ")} FROM json_each(@rows) ORDER BY key`,
    ),
  );
  const encoded = rows.map((row) =>
    columns.map(([key, column]) => {
      const value = (row as Record<string, unknown>)[key];
      if (value === undefined) throw new Error(`insertRows(${name}): no value for column ${key}`);
      return value === null ? null : column.mapToDriverValue(value);
    }),
  );
  return statement.run({ rows: JSON.stringify(encoded) }).changes;
}
