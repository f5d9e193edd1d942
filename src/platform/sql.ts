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
  const { name, columns } = describe(table);
  const statement = prepared(tx, `insertRow:${name}`, () => {
    // Raw placeholders: a Drizzle placeholder bound to a column would encode a JSON null as 'null'.
    const values = Object.fromEntries(columns.map(({ key }) => [key, sql`${sql.placeholder(key)}`]));
    return tx
      .insert(table)
      .values(values as T["$inferInsert"])
      .prepare();
  });
  const params: Record<string, unknown> = {};
  for (const c of columns) params[c.key] = encodeValue(name, c, (row as Record<string, unknown>)[c.key]);
  statement.run(params);
}

/**
 * Inserts many whole rows in one statement: the values that differ between rows travel as one
 * JSON array bound to a single parameter, spread over their columns by SQLite's json_each, and
 * the values all rows share are bound once each. What it buys: one statement per batch instead of
 * one execution per row, with little to encode (the worker's periodic checks start an operation
 * for every branch with an endpoint at the same moment, alike but for their ids). Values are
 * encoded as insertRow encodes them; rows keep their order (json_each's `key`).
 */
export function insertRows<T extends SQLiteTable>(
  tx: Tx,
  table: T,
  rows: readonly T["$inferSelect"][],
): number {
  const first = rows[0] as Record<string, unknown> | undefined;
  if (!first) return 0;
  const { name, columns } = describe(table);
  const all = rows as readonly Record<string, unknown>[];
  const varies = columns.map(({ key }) => all.some((row) => row[key] !== first[key]));
  const shape = varies.map((v) => (v ? "v" : "s")).join("");
  const statement = prepared(tx, `insertRows:${name}:${shape}`, () => {
    let next = 0;
    const values = columns.map((_, i) => (varies[i] ? `value ->> ${next++}` : `@s${i}`));
    return (connectionOf(tx) as Database.Database).prepare(
      `INSERT INTO "${name}" (${columns.map((c) => `"${c.column.name}"`).join(", ")})
       SELECT ${values.join(", ")} FROM json_each(@rows) ORDER BY key`,
    );
  });
  const params: Record<string, unknown> = {};
  const varying = columns.filter((_, i) => varies[i]);
  columns.forEach((c, i) => {
    if (!varies[i]) params[`s${i}`] = encodeValue(name, c, first[c.key]);
  });
  params.rows = JSON.stringify(all.map((row) => varying.map((c) => encodeValue(name, c, row[c.key]))));
  return statement.run(params).changes;
}

interface ColumnInfo {
  key: string;
  column: SQLiteColumn;
}

const descriptions = new WeakMap<SQLiteTable, { name: string; columns: ColumnInfo[] }>();

/** A table's name and columns, looked up once per table. */
function describe(table: SQLiteTable): { name: string; columns: ColumnInfo[] } {
  let found = descriptions.get(table);
  if (!found) {
    found = {
      name: getTableName(table),
      columns: Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, column })),
    };
    descriptions.set(table, found);
  }
  return found;
}

/** A value as Drizzle's plain insert encodes it; a missing one is an error, never silently NULL. */
function encodeValue(table: string, { key, column }: ColumnInfo, value: unknown): unknown {
  if (value === undefined) throw new Error(`insert into ${table}: no value for column ${key}`);
  return value === null ? null : column.mapToDriverValue(value);
}
