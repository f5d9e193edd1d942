import type { Db } from "../db/client.js";

const caches = new WeakMap<Db, Map<string, unknown>>();

/**
 * One prepared statement per database handle and key: building a Drizzle query per request
 * costs the SQL build and an SQLite recompile each time; a prepared one costs neither.
 */
export function prepared<T>(db: Db, key: string, build: () => T): T {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let stmt = cache.get(key) as T | undefined;
  if (stmt === undefined) {
    stmt = build();
    cache.set(key, stmt);
  }
  return stmt;
}
