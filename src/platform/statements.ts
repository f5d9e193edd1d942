import type Database from "better-sqlite3";
import type { Tx } from "./db.js";

const caches = new WeakMap<object, Map<string, unknown>>();

/** The better-sqlite3 connection behind a database handle or one of its transactions. */
export function connectionOf(db: Tx): object {
  return (db as unknown as { session: { client: object } }).session.client;
}

/**
 * One prepared statement per connection and key: building a Drizzle query per request costs the
 * SQL build and an SQLite recompile each time; a prepared one costs neither. Keyed by the
 * connection, so a statement prepared through a transaction handle serves the plain handle too
 * (better-sqlite3 runs everything on the one connection, inside whatever transaction is open).
 */
export function prepared<T>(db: Tx, key: string, build: () => T): T {
  const connection = connectionOf(db);
  let cache = caches.get(connection);
  if (!cache) {
    cache = new Map();
    caches.set(connection, cache);
  }
  let stmt = cache.get(key) as T | undefined;
  if (stmt === undefined) {
    stmt = build();
    cache.set(key, stmt);
  }
  return stmt;
}

/**
 * A raw better-sqlite3 statement on the handle's connection, prepared once per SQL text. For the
 * hottest paths only: rows come back as plain objects (alias columns to the row's field names in
 * the SQL) without Drizzle's per-column mapping, which costs more than the query itself there.
 */
export function statement<Row = unknown>(db: Tx, text: string): Statement<Row> {
  return prepared(
    db,
    `sql:${text}`,
    () => (connectionOf(db) as Database.Database).prepare(text) as Statement<Row>,
  );
}

/** Parameters (named, as an object) in, `Row` out. */
export type Statement<Row> = Database.Statement<unknown[], Row>;
