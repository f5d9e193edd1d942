import fs from "node:fs";
import path from "node:path";
import { pg } from "../../platform/pg.js";
import type { Administrator } from "./admin.js";
import { readdir } from "./binaries.js";
import { controlInfo, segmentName } from "./copy.js";
import { dropSubscription, MARKS } from "./reconcile.js";
import { archiving } from "./server-settings.js";

/**
 * What a branch's copy loses before any compute runs on it: the logical replication subscriptions
 * of its source (which would take the source's changes twice), and for a schema-only branch its rows.
 */

/** Runs `work` on a server started on `dir` for the emulator's own work alone, and stops it after (PostgresDriver.onFolder). */
export type OnFolder = <T>(
  dir: string,
  settings: Record<string, string>,
  work: (port: number) => Promise<T>,
) => Promise<T>;

/** pg_subscription's file in `global/` (a shared catalog keeps its OID as its file name). */
const PG_SUBSCRIPTION_FILE = "6100";

/** A connection string no server answers (port 1 refuses at once); it names a password, as a subscription owned by a non-superuser must. */
const UNREACHABLE = "host=127.0.0.1 port=1 connect_timeout=1 password=unused";

/**
 * Empties one database of a schema-only copy (see keepSchemaOnly), as one transaction, run by the
 * administrator on a session whose search_path holds nothing of the users' (Administrator.session). Every
 * table with storage is truncated ONLY (a partitioned table's foreign partitions, whose rows live
 * elsewhere, are not reached); no user trigger runs as the administrator: TRUNCATE triggers of
 * the default kind do not fire under session_replication_role = replica, and those marked ALWAYS
 * or REPLICA are disabled for the truncation and given back their kind after it. Objects an
 * extension made are left to it, and the emulator's marks of its roles and databases (the MARKS
 * schema of `postgres`, which no user can write) to the emulator: without them, every role the
 * copy holds would look made with SQL, and no API change could be applied to the branch.
 */
const SCHEMA_ONLY_SQL = `
SET session_replication_role = replica;
DO $$
DECLARE
  own CONSTANT text := $q$
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
      AND NOT (n.nspname = '${MARKS}' AND pg_catalog.current_database() = 'postgres')
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                       WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')$q$;
  tables text;
  name text;
  t record;
BEGIN
  CREATE TEMP TABLE firing ON COMMIT DROP AS
    SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) AS rel, g.tgname, g.tgenabled
      FROM pg_catalog.pg_trigger g JOIN pg_catalog.pg_class c ON c.oid = g.tgrelid
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE NOT g.tgisinternal AND g.tgenabled IN ('A', 'R') AND (g.tgtype::int & 32) <> 0;
  FOR t IN SELECT * FROM firing LOOP
    EXECUTE pg_catalog.format('ALTER TABLE ONLY %s DISABLE TRIGGER %I', t.rel, t.tgname);
  END LOOP;
  EXECUTE 'SELECT pg_catalog.string_agg(''ONLY '' || pg_catalog.format(''%I.%I'', n.nspname, c.relname), '', '') ' || own
    || $q$ AND c.relkind = 'r'$q$ INTO tables;
  IF tables IS NOT NULL THEN
    EXECUTE 'TRUNCATE ' || tables || ' RESTART IDENTITY CASCADE';
  END IF;
  FOR t IN SELECT * FROM firing LOOP
    EXECUTE pg_catalog.format('ALTER TABLE ONLY %s ENABLE %s TRIGGER %I', t.rel,
      CASE t.tgenabled WHEN 'A' THEN 'ALWAYS' ELSE 'REPLICA' END, t.tgname);
  END LOOP;
  FOR name IN EXECUTE 'SELECT pg_catalog.format(''%I.%I'', n.nspname, c.relname) ' || own || $q$ AND c.relkind = 'S'$q$ LOOP
    EXECUTE 'ALTER SEQUENCE ' || name || ' RESTART';
  END LOOP;
  FOR name IN EXECUTE 'SELECT pg_catalog.format(''%I.%I'', n.nspname, c.relname) ' || own || $q$ AND c.relkind = 'm'$q$ LOOP
    EXECUTE 'REFRESH MATERIALIZED VIEW ' || name || ' WITH NO DATA';
  END LOOP;
  DELETE FROM pg_catalog.pg_statistic;
  DELETE FROM pg_catalog.pg_statistic_ext_data;
END $$;
`;

/**
 * A copy's subscriptions go before any compute runs on it, as on Neon (for a new branch, a reset
 * and a restore alike): the copy would otherwise subscribe to the same publication through the
 * same slot as its source. Its server starts once with no replication workers (nothing connects
 * to a publisher), the subscriptions are dropped without touching their slots (the source's
 * subscriptions still use them), and it stops. A folder that never held a subscription (its
 * pg_subscription file is empty) is left as it is.
 */
export async function dropSubscriptions(
  onFolder: OnFolder,
  admin: Administrator,
  dir: string,
  projectDir: string,
): Promise<void> {
  const catalog = path.join(dir, "global", PG_SUBSCRIPTION_FILE);
  if (fs.existsSync(catalog) && fs.statSync(catalog).size === 0) return;
  const settings = { max_logical_replication_workers: "0", ...archiving(projectDir, dir) };
  await onFolder(dir, settings, async (port) => {
    const subscriptions = await admin.session(port, async (client) => {
      const found = await client.query<{ subname: string; datname: string }>(
        "SELECT s.subname, d.datname FROM pg_subscription s JOIN pg_database d ON d.oid = s.subdbid",
      );
      return found.rows;
    });
    for (const { subname, datname } of subscriptions)
      await admin.session(
        port,
        // The source's table synchronisation slots carry the same names as the copy's would (same
        // subscription id and system): the copy's subscription goes without reaching them.
        (client) => dropSubscription(client, subname, UNREACHABLE),
        datname,
      );
  });
}

/**
 * A schema-only branch's copy loses its rows before any compute runs on it, in every database:
 * its tables are emptied (their sequences and identities restarted, no trigger fired), its
 * materialized views left unpopulated (as `pg_dump --schema-only` restores them), its large
 * objects removed, and the planner's statistics, which hold sample values of the columns,
 * dropped with the cumulative statistics and pg_stat_statements' saved queries; the catalogs
 * that held them are rewritten and the WAL that held the rows removed, so no file keeps their
 * bytes. What extensions made (their member tables) stays. Roles, databases, schemas,
 * functions, indexes and every other definition stay as the source has them.
 */
export async function keepSchemaOnly(onFolder: OnFolder, admin: Administrator, dir: string): Promise<void> {
  for (const folder of ["pg_stat", "pg_stat_tmp"])
    for (const file of readdir(path.join(dir, folder)))
      fs.rmSync(path.join(dir, folder, file), { force: true });
  const settings = {
    max_logical_replication_workers: "0",
    wal_recycle: "off",
    // One transaction locks every table, its TOAST table and its indexes (thousands of
    // partitions): ~18,000 locks in the shared lock table, which a few connections leave small.
    max_connections: "20",
    max_locks_per_transaction: "512",
  };
  await onFolder(dir, settings, async (port) => {
    // Every database but template0 (nothing can change it); one left invalid by a DROP cut
    // short, which no one can use and whose files may hold rows, goes.
    const databases = await admin.session(port, async (client) => {
      const invalid = await client.query<{ datname: string }>(
        "SELECT datname FROM pg_catalog.pg_database WHERE datconnlimit = -2",
      );
      for (const { datname } of invalid.rows)
        await client.query(`DROP DATABASE ${pg().escapeIdentifier(datname)}`);
      const found = await client.query<{ datname: string; datallowconn: boolean }>(
        `SELECT datname, datallowconn FROM pg_catalog.pg_database
          WHERE datname <> 'template0' ORDER BY datname`,
      );
      // One its owner closed to connections is opened for this alone.
      for (const db of found.rows)
        if (!db.datallowconn)
          await client.query(`ALTER DATABASE ${pg().escapeIdentifier(db.datname)} ALLOW_CONNECTIONS true`);
      return found.rows;
    });
    for (const { datname } of databases)
      await admin.session(
        port,
        async (client) => {
          await client.query(SCHEMA_ONLY_SQL);
          // Large objects go a batch per transaction (each one unlinked takes a lock).
          for (;;) {
            const gone = await client.query<{ n: number }>(
              `SELECT pg_catalog.count(pg_catalog.lo_unlink(oid))::int AS n
                 FROM (SELECT oid FROM pg_catalog.pg_largeobject_metadata LIMIT 1000) batch`,
            );
            if (gone.rows[0]?.n === 0) break;
          }
          // Deleted rows stay in a table's pages until it is rewritten.
          await client.query(
            "VACUUM FULL pg_catalog.pg_statistic, pg_catalog.pg_statistic_ext_data, pg_catalog.pg_largeobject, pg_catalog.pg_largeobject_metadata",
          );
        },
        datname,
      );
    await admin.session(port, async (client) => {
      for (const db of databases)
        if (!db.datallowconn)
          await client.query(`ALTER DATABASE ${pg().escapeIdentifier(db.datname)} ALLOW_CONNECTIONS false`);
      // The WAL that held the rows is removed, not kept for reuse (wal_recycle=off).
      await client.query("SELECT pg_catalog.pg_switch_wal()");
      await client.query("CHECKPOINT");
    });
  });
  // Segments made ahead of need (recycled by the source's server before the copy) hold old WAL.
  const { checkpoint, tli } = controlInfo(dir);
  const current = segmentName(tli, checkpoint);
  const wal = path.join(dir, "pg_wal");
  for (const file of readdir(wal))
    if (/^[0-9A-F]{24}$/.test(file) && file > current) fs.rmSync(path.join(wal, file), { force: true });
}
