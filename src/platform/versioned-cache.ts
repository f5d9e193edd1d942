/**
 * Values kept per database connection and key, each valid for one version number that the
 * database bumps whenever the value's source changes (e.g. triggers bump a project's endpoint
 * version on every write of its endpoints, in the same transaction). What it buys over the read
 * cache (read-cache.ts), which forgets everything at any change of the database: a project's
 * serialized endpoint list survives writes elsewhere (other projects, operations, key uses), so a
 * busy sandbox still serves unchanged lists without reading and serializing them again.
 */
export class VersionedCache<V> {
  private readonly byConnection = new WeakMap<object, Map<string, { version: number; value: V }>>();

  constructor(private readonly maxEntries: number) {}

  /** The value for `key` at `version`: the kept one if it was made at that version, else `make()`'s. */
  get(connection: object, key: string, version: number, make: () => V): V {
    let entries = this.byConnection.get(connection);
    if (!entries) {
      entries = new Map();
      this.byConnection.set(connection, entries);
    }
    const hit = entries.get(key);
    if (hit && hit.version === version) return hit.value;
    const value = make();
    if (entries.size >= this.maxEntries) entries.clear();
    entries.set(key, { version, value });
    return value;
  }
}
