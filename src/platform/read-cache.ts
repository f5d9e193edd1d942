import type Database from "better-sqlite3";
import type { Tx } from "./db.js";
import { connectionOf, statement } from "./statements.js";

/** Entries kept at most; the cache starts over when full. */
const MAX_ENTRIES = 2000;

interface Cache {
  othersVersion: number;
  ownChanges: number;
  /** The request whose first cached read last looked at othersVersion. */
  checkedFor: object | undefined;
  entries: Map<string, unknown>;
}

const caches = new WeakMap<object, Cache>();

/**
 * Results of hot reads (authentication, a project's endpoint list), kept while the database
 * cannot have changed. `data_version` moves whenever another connection commits (the keys CLI,
 * a second process) and `total_changes()` whenever this connection changes a row, committed or
 * rolled back. While both stay put, a read outside a transaction returns exactly what it
 * returned before; the first change of either drops every entry. Inside a transaction the read
 * always runs and is never kept: it may see uncommitted rows. `read` must only read.
 *
 * Looking at `data_version` takes SQLite's shared-memory read lock (two fcntl calls), as any
 * read does; `total_changes()` takes none. So other connections are looked for once per request:
 * the later cached reads of the request given as `request` check only this connection's changes,
 * which makes the request read as of its first cached read, a moment inside the request.
 */
export function cachedRead<T>(db: Tx, key: string, read: () => T, request: object): T {
  const connection = connectionOf(db) as Database.Database;
  if (connection.inTransaction) return read();
  let cache = caches.get(connection);
  if (!cache) {
    cache = { othersVersion: -1, ownChanges: -1, checkedFor: undefined, entries: new Map() };
    caches.set(connection, cache);
  }
  // Two statements: the pragma_data_version table-valued function would prepare a statement of
  // its own at every step.
  const ownChanges = statement(db, "SELECT total_changes()").pluck().get() as number;
  let othersVersion = cache.othersVersion;
  if (cache.checkedFor !== request) {
    othersVersion = statement(db, "PRAGMA data_version").pluck().get() as number;
    cache.checkedFor = request;
  }
  if (othersVersion !== cache.othersVersion || ownChanges !== cache.ownChanges) {
    cache.othersVersion = othersVersion;
    cache.ownChanges = ownChanges;
    cache.entries.clear();
  }
  if (cache.entries.has(key)) return cache.entries.get(key) as T;
  const value = read();
  if (cache.entries.size >= MAX_ENTRIES) cache.entries.clear();
  cache.entries.set(key, value);
  return value;
}
