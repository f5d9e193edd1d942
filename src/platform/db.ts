import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import Database from "better-sqlite3";
import { type BetterSQLite3Database, drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { packageRoot, requireFromPackage } from "./package-root.js";

type TransactionBehavior = "deferred" | "immediate" | "exclusive";

/**
 * The Drizzle handle, whose `transaction` is better-sqlite3's own (see openStorage): the callback
 * gets this same handle, and a nested call is a savepoint.
 */
export type Db = Omit<BetterSQLite3Database, "transaction"> & {
  transaction<T>(fn: (tx: Db) => T, config?: { behavior?: TransactionBehavior }): T;
};
/** The handle as a function that may run inside a transaction takes it (the same handle). */
export type Tx = Db;

export interface Storage {
  db: Db;
  sqlite: Database.Database;
  /** Copies committed WAL pages into the database file every `ms` until close(). */
  startCheckpoints(ms: number): void;
  close(): void;
}

let addon: object | undefined;

/**
 * better-sqlite3's native addon, loaded on first use: the bundle holds the package's JavaScript,
 * and the start-up snapshot cannot hold a native module, so the addon is handed over at run time.
 * It is found where better-sqlite3 itself looks (build/Release, build/Debug, ...), through the
 * `bindings` package it depends on.
 */
function nativeAddon(): object {
  if (!addon) {
    const manifest = requireFromPackage().resolve("better-sqlite3/package.json");
    const bindings = createRequire(manifest)("bindings") as (options: {
      bindings: string;
      module_root: string;
    }) => object;
    addon = bindings({ bindings: "better_sqlite3.node", module_root: path.dirname(manifest) });
  }
  return addon;
}

/**
 * Copies what the WAL holds back into the database file, without waiting for anyone (PASSIVE):
 * for work that writes in bursts between which requests run (a long clock advance).
 */
export function checkpointWal(db: Db): void {
  (db as unknown as { $client: Database.Database }).$client.pragma("wal_checkpoint(PASSIVE)");
}

/** The database `npm run build` makes with every migration applied (src/cli/empty-db.ts). */
export const EMPTY_DATABASE = path.join("dist", "empty.sqlite");

/**
 * Makes a database file that does not exist yet as a copy of the template (EMPTY_DATABASE unless
 * openStorage is told otherwise): applying ~26
 * migrations to a new file costs 15–30 ms of a start, copying their result well under one. The copy
 * is written under another name (mode 0600) and linked into place, so a file another process made
 * meanwhile is never overwritten. False (nothing made) when the file exists, there is no template
 * (tests run from source before a build) or the link fails (a file system without hard links);
 * the caller then makes an empty file and migrates it. A template older than the migrations still
 * does: migrate() applies those it lacks.
 */
function fromTemplate(file: string, template: string): boolean {
  if (fs.existsSync(file)) return false;
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(template);
  } catch {
    return false;
  }
  const staged = `${file}.new-${process.pid}`;
  try {
    fs.writeFileSync(staged, bytes, { mode: 0o600, flag: "wx" });
    fs.linkSync(staged, file);
    return true;
  } catch (err) {
    // EEXIST: another process made the file first; it is opened as it is.
    return (err as NodeJS.ErrnoException).code === "EEXIST" && fs.existsSync(file);
  } finally {
    fs.rmSync(staged, { force: true });
  }
}

/**
 * Opens (creating if needed: from the template, see fromTemplate; `template: false`, an empty
 * file) and migrates a database. Migrations only ever add to an existing file: an old database is
 * upgraded in place, never wiped.
 */
export function openStorage(file: string, options: { template?: string | false } = {}): Storage {
  if (file !== ":memory:") {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const template = options.template ?? path.join(packageRoot(), EMPTY_DATABASE);
    if (template === false || !fromTemplate(file, template)) {
      // A new database is its owner's alone (it holds key hashes and role passwords); SQLite gives
      // its -wal and -shm files the database file's mode.
      try {
        fs.closeSync(fs.openSync(file, "wx", 0o600));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
  }
  // better-sqlite3 takes the loaded addon itself as nativeBinding (its typings list only a path).
  const sqlite = new Database(file, { nativeBinding: nativeAddon() as unknown as string });
  sqlite.pragma("journal_mode = WAL");
  // NORMAL in WAL mode: a commit survives a process crash (SIGKILL); only an OS crash may lose the last commits.
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  // The WAL is copied back into the database file by a timed passive checkpoint (see
  // startCheckpoints), not by the commit that crosses SQLite's default 1000 pages: a page written
  // by many commits is then copied once, and no request pays for a checkpoint. The automatic one
  // stays as a backstop at 10000 pages (40 MB).
  sqlite.pragma("wal_autocheckpoint = 10000");
  // No schema is handed to Drizzle: stores build their queries from the tables they import, and
  // the relational query API (which needs it) is not used.
  const drizzleDb = drizzle(sqlite);
  // Every transaction takes the write lock as it begins (BEGIN IMMEDIATE), waiting up to the busy
  // timeout for another process (`npm run keys`) to finish. A DEFERRED one reads first, and if
  // that process commits before its first write, SQLite refuses the upgrade with
  // SQLITE_BUSY_SNAPSHOT, which no busy timeout retries: a 500 for a valid request.
  //
  // The transaction is better-sqlite3's own, built once (Drizzle builds a transaction object and a
  // better-sqlite3 wrapper, with their property descriptors, at every call), and the callback
  // gets the database handle itself: better-sqlite3 runs every statement of the connection inside
  // the open transaction, and turns a nested call into a savepoint.
  const inTransaction = sqlite.transaction((fn: () => unknown) => fn());
  const db = drizzleDb as unknown as Db;
  db.transaction = <T>(fn: (tx: Db) => T, config?: { behavior?: TransactionBehavior }) =>
    inTransaction[config?.behavior ?? "immediate"](() => fn(db)) as T;
  migrate(drizzleDb, { migrationsFolder: path.join(packageRoot(), "migrations") });
  let timer: NodeJS.Timeout | undefined;
  return {
    db,
    sqlite,
    startCheckpoints(ms) {
      clearInterval(timer);
      timer = setInterval(() => {
        // PASSIVE never waits for readers or writers; whatever it cannot copy now, it copies next time.
        if (sqlite.open) sqlite.pragma("wal_checkpoint(PASSIVE)");
      }, ms);
      timer.unref();
    },
    close: () => {
      clearInterval(timer);
      if (sqlite.open) sqlite.close();
    },
  };
}
