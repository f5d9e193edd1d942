import fs from "node:fs";
import path from "node:path";
import { EMPTY_DATABASE, openStorage } from "../platform/db.js";
import { packageRoot } from "../platform/package-root.js";

/**
 * `npm run build`'s last step: dist/empty.sqlite, a database with every migration applied, which
 * a new database file starts as (see openStorage). Made from the migrations themselves, never
 * from an earlier template; written under another name and renamed whole.
 */
const out = path.join(packageRoot(), EMPTY_DATABASE);
const work = `${out}.tmp-${process.pid}`;
const remove = () => {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(`${work}${suffix}`, { force: true });
};
remove();
try {
  const storage = openStorage(work, { template: false });
  // Everything in the file itself: the last connection's close folds the WAL in and removes it.
  storage.sqlite.pragma("wal_checkpoint(TRUNCATE)");
  storage.close();
  // Readable by whoever runs the emulator from this folder: it holds a schema, no data.
  fs.chmodSync(work, 0o644);
  fs.renameSync(work, out);
} finally {
  remove();
}
