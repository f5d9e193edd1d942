import { createHash } from "node:crypto";
import { type PgClient, pg } from "../../platform/pg.js";
import { parseVerifier, verifierOf, verifierText, verifies } from "../../platform/scram-verifier.js";

/** What the control plane says a branch holds. */
export interface BranchSpec {
  /** `verifier` (not null): the password was set with SQL, and this is Postgres' verifier of it ("" for none). */
  roles: { name: string; password: string; verifier: string | null; noLogin: boolean }[];
  /** `origin`: the id the database is marked with in Postgres (its origin's, whatever branch it was copied from). */
  databases: { origin: number; name: string; ownerName: string }[];
  /** Roles and databases the API deleted that the data may still hold (databases by name and origin): the only ones dropped. */
  drops: { roles: string[]; databases: { name: string; origin: number | null }[] };
  /** The branch is a schema-only branch or descends from one (whose marks earlier builds emptied). */
  fromSchemaOnly?: boolean;
}

/**
 * Which roles and databases are the control plane's is kept in the cluster beside them, so every
 * copy, point of history and restore of the data carries it with the catalog it describes: two
 * tables of the administrator's schema in the `postgres` database (as Neon's compute keeps its
 * own records there, in `neon_migration`), keyed by the objects' oids. A role's `adopted`: made
 * with SQL and taken by the control plane (managed from then on, but not given API roles'
 * attributes); a database's `origin`: the control plane's id of it, and `granted`: Neon's grants
 * in it are made (DATABASE_GRANTS). Comments stay the user's.
 * The project's roles may write any table (pg_write_all_data): a trigger refuses their writes
 * there (a restore of a dump of `postgres` from another branch would bring that branch's marks).
 */
export const MARKS = "neon_emulator";

/** What the emulator marked its roles and databases with before the marks tables (`neon-emulator`, `:sql`, `:<id>`). */
const LEGACY = "neon-emulator";

/** One query (one transaction): the marks tables, and what a folder of an earlier version marked with comments moved there. */
const MAKE_MARKS = `
CREATE SCHEMA ${MARKS};
CREATE TABLE ${MARKS}.roles (oid oid PRIMARY KEY, adopted boolean NOT NULL);
CREATE TABLE ${MARKS}.databases (oid oid PRIMARY KEY, origin integer NOT NULL, granted boolean NOT NULL DEFAULT false);
CREATE FUNCTION ${MARKS}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    RAISE EXCEPTION 'permission denied for table %', TG_TABLE_NAME USING ERRCODE = '42501';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER refuse BEFORE INSERT OR UPDATE OR DELETE ON ${MARKS}.roles
  FOR EACH STATEMENT EXECUTE FUNCTION ${MARKS}.refuse();
CREATE TRIGGER refuse BEFORE INSERT OR UPDATE OR DELETE ON ${MARKS}.databases
  FOR EACH STATEMENT EXECUTE FUNCTION ${MARKS}.refuse();
INSERT INTO ${MARKS}.roles
  SELECT oid, shobj_description(oid, 'pg_authid') = '${LEGACY}:sql' FROM pg_authid
   WHERE shobj_description(oid, 'pg_authid') IN ('${LEGACY}', '${LEGACY}:sql');
INSERT INTO ${MARKS}.databases
  SELECT oid, substr(shobj_description(oid, 'pg_database'), ${LEGACY.length + 2})::integer FROM pg_database
   WHERE shobj_description(oid, 'pg_database') ~ '^${LEGACY}:[0-9]{1,9}$';
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT rolname FROM pg_authid
            WHERE shobj_description(oid, 'pg_authid') IN ('${LEGACY}', '${LEGACY}:sql') LOOP
    EXECUTE format('COMMENT ON ROLE %I IS NULL', r.rolname);
  END LOOP;
  FOR r IN SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') ~ '^${LEGACY}:[0-9]{1,9}$' LOOP
    EXECUTE format('COMMENT ON DATABASE %I IS NULL', r.datname);
  END LOOP;
END $$`;

const hasMarks = async (client: PgClient) =>
  (await client.query<{ made: boolean }>(`SELECT to_regclass('${MARKS}.roles') IS NOT NULL AS made`)).rows[0]
    ?.made === true;

/**
 * Makes the marks tables on a server that lacks them (a new template, or a folder of an earlier
 * version, whose comment marks move there), and forgets the marks of roles and databases gone.
 * Its client is the administrator's, on `postgres`.
 */
export async function ensureMarks(client: PgClient): Promise<void> {
  if (!(await hasMarks(client))) await client.query(MAKE_MARKS);
  await client.query(
    `DELETE FROM ${MARKS}.roles m WHERE NOT EXISTS (SELECT 1 FROM pg_authid r WHERE r.oid = m.oid);
     DELETE FROM ${MARKS}.databases m WHERE NOT EXISTS (SELECT 1 FROM pg_database d WHERE d.oid = m.oid)`,
  );
}
/** Role every API role belongs to, as on Neon (created in the template). */
export const NEON_SUPERUSER = "neon_superuser";

/** What Neon's compute gives neon_superuser (compute_ctl's create_neon_superuser.sql). */
export const NEON_SUPERUSER_ATTRIBUTES = "NOLOGIN CREATEDB CREATEROLE REPLICATION BYPASSRLS";

/**
 * The predefined roles Neon's compute makes neon_superuser a member of, each with ADMIN OPTION (as
 * a pg_dumpall of a Neon project shows them): all data read and written, every session and
 * statistic visible (pg_monitor), other roles' queries cancelled or ended (pg_signal_backend),
 * subscriptions (16+), maintenance commands on any table (pg_maintain, 17+), autovacuum workers
 * signalled (18+).
 */
function neonSuperuserRoles(serverVersionNum: number): { role: string; options: string }[] {
  const admin = "WITH ADMIN OPTION";
  return [
    { role: "pg_read_all_data", options: admin },
    { role: "pg_write_all_data", options: admin },
    { role: "pg_monitor", options: admin },
    { role: "pg_signal_backend", options: admin },
    ...(serverVersionNum >= 160000 ? [{ role: "pg_create_subscription", options: admin }] : []),
    ...(serverVersionNum >= 170000 ? [{ role: "pg_maintain", options: `${admin}, SET FALSE` }] : []),
    ...(serverVersionNum >= 180000
      ? [{ role: "pg_signal_autovacuum_worker", options: `${admin}, SET FALSE` }]
      : []),
  ];
}

/** What Neon's compute grants neon_superuser (compute_ctl's create_neon_superuser.sql and migrations). */
export function neonSuperuserGrants(serverVersionNum: number): string[] {
  return [
    ...neonSuperuserRoles(serverVersionNum).map(
      ({ role, options }) => `GRANT ${role} TO ${NEON_SUPERUSER} ${options}`,
    ),
    `GRANT EXECUTE ON FUNCTION pg_show_replication_origin_status TO ${NEON_SUPERUSER}`,
  ];
}

/** Whether neon_superuser lacks a membership Neon's compute gives it (a folder an earlier emulator made). */
async function lacksNeonGrants(client: PgClient, serverVersionNum: number): Promise<boolean> {
  const roles = neonSuperuserRoles(serverVersionNum).map((r) => r.role);
  const lacking = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM unnest($1::text[]) AS r(name)
      WHERE NOT pg_has_role('${NEON_SUPERUSER}', r.name, 'MEMBER WITH ADMIN OPTION')`,
    [roles],
  );
  return (lacking.rows[0]?.n ?? 0) > 0;
}

/**
 * What Neon's compute does in each database the control plane holds (compute_ctl's
 * handle_grants), as its administrator, once here: a `public` schema the administrator owns
 * (Postgres 14's) goes to the database's owner, and what the administrator makes in it (objects
 * of extensions) is neon_superuser's to use and grant — the two lines every pg_dump of a Neon
 * database ends with (ALTER DEFAULT PRIVILEGES FOR ROLE cloud_admin IN SCHEMA public …).
 */
const DATABASE_GRANTS = `DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
    IF (SELECT nspowner FROM pg_namespace WHERE nspname = 'public') = (SELECT oid FROM pg_roles WHERE rolname = current_user) THEN
      EXECUTE format('ALTER SCHEMA public OWNER TO %I',
        (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()));
    END IF;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO ${NEON_SUPERUSER} WITH GRANT OPTION;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON SEQUENCES TO ${NEON_SUPERUSER} WITH GRANT OPTION;
  END IF;
END $$`;

/**
 * Makes Neon's grants in the databases the control plane holds that lack them (made or taken
 * since, or marked by an earlier emulator), each through a session of its own (`inDatabase`).
 */
export async function grantInDatabases(
  client: PgClient,
  names: string[],
  inDatabase: InDatabase,
): Promise<void> {
  const lacking = await client.query<{ datname: string }>(
    `SELECT d.datname FROM pg_database d JOIN ${MARKS}.databases m ON m.oid = d.oid
      WHERE NOT m.granted AND d.datallowconn AND d.datconnlimit <> -2 AND d.datname = ANY($1) ORDER BY d.oid`,
    [names],
  );
  for (const { datname } of lacking.rows) {
    await inDatabase(datname, (c) => c.query(DATABASE_GRANTS).then(() => {}));
    await client.query(
      `UPDATE ${MARKS}.databases SET granted = true WHERE oid = (SELECT oid FROM pg_database WHERE datname = $1)`,
      [datname],
    );
  }
}

/** What Neon's compute grants on every database the API makes: any API role may create schemas in it. */
export const databaseGrant = (quotedName: string) =>
  `GRANT ALL PRIVILEGES ON DATABASE ${quotedName} TO ${NEON_SUPERUSER}`;

const versionNum = async (client: PgClient) =>
  Number((await client.query("SHOW server_version_num")).rows[0].server_version_num);

/**
 * What Neon's compute gives a role the API creates, besides LOGIN and its password (compute_ctl's
 * spec_apply: `CREATE ROLE x INHERIT CREATEROLE CREATEDB BYPASSRLS REPLICATION IN ROLE
 * neon_superuser`): it may open replication connections and is not held back by row-level security.
 */
export const API_ROLE_ATTRIBUTES = "INHERIT CREATEROLE CREATEDB BYPASSRLS REPLICATION";

const ident = (name: string) => pg().escapeIdentifier(name);
const literal = (text: string) => pg().escapeLiteral(text);

/** Marks a role as the emulator's: one it made (`adopted` false), or one made with SQL it took (kept as marked when already marked). */
export const markRole = (name: string, adopted: boolean) =>
  `INSERT INTO ${MARKS}.roles SELECT oid, ${adopted} FROM pg_authid WHERE rolname = ${literal(name)}
     ON CONFLICT (oid) DO NOTHING`;

/** Marks a database as the control plane's database `id` (the emulator's from then on). */
export const markDatabase = (name: string, id: number) =>
  `INSERT INTO ${MARKS}.databases SELECT oid, ${Math.trunc(id)} FROM pg_database WHERE datname = ${literal(name)}
     ON CONFLICT (oid) DO UPDATE SET origin = EXCLUDED.origin`;

/** The databases a server holds (templates aside): name, owner, and the control plane's id it is marked with (null: none). */
export const databasesWithOrigins = (client: PgClient, where = "TRUE") =>
  client.query<HeldDatabase>(
    `SELECT d.datname, pg_get_userbyid(d.datdba) AS owner, m.origin, m.granted
       FROM pg_database d LEFT JOIN ${MARKS}.databases m ON m.oid = d.oid
      WHERE NOT d.datistemplate AND (${where}) ORDER BY d.oid`,
  );

/**
 * A role's password clause: the control plane's password as a SCRAM verifier made here (as Neon's
 * compute is given them), or the verifier SQL left; Postgres keeps either as it is, whatever an
 * endpoint's password_encryption or scram_iterations say (md5 would lock SCRAM logins out; a
 * huge iteration count would keep the statement hashing for hours).
 */
const passwordOf = (role: BranchSpec["roles"][number]) =>
  role.verifier === null
    ? literal(verifierText(verifierOf(role.password)))
    : role.verifier === ""
      ? "NULL"
      : literal(role.verifier);

/** Whether a role's pg_authid password is the control plane's (its password's verifier, or the verifier SQL left). */
function holdsPassword(held: string | null, role: BranchSpec["roles"][number]): boolean {
  if (role.verifier !== null) return held === (role.verifier === "" ? null : role.verifier);
  const verifier = parseVerifier(held);
  return verifier !== undefined && verifies(verifier, role.password);
}

/**
 * The roles a server holds, with what a reconcile sets or reads of them (pg_authid: its client is
 * the administrator); `adopted` null: not the emulator's.
 */
const heldRoles = (client: PgClient) =>
  client.query<{
    rolname: string;
    rolcanlogin: boolean;
    rolreplication: boolean;
    rolpassword: string | null;
    adopted: boolean | null;
  }>(
    `SELECT r.rolname, r.rolcanlogin, r.rolreplication, r.rolpassword, m.adopted
       FROM pg_authid r LEFT JOIN ${MARKS}.roles m ON m.oid = r.oid`,
  );

/** A database a server holds: its name, its owner's, and the control plane's id it is marked with. */
interface HeldDatabase {
  datname: string;
  owner: string;
  origin: number | null;
  granted: boolean | null;
}

/** The control plane's id a database is marked with, if the emulator made or took it. */
const originOf = (d: HeldDatabase): number | undefined => d.origin ?? undefined;

/** Runs `work` in a session of the server's administrator on another database. */
type InDatabase = (database: string, work: (client: PgClient) => Promise<void>) => Promise<void>;

/**
 * Brings a running branch server's roles and databases to what the control plane holds: creates
 * what is missing (roles with LOGIN PASSWORD and Neon's attributes, in neon_superuser; databases with their owner),
 * sets every role's password, renames a database the API renamed (found by the origin its
 * mark holds), changes owners, and drops the managed roles and databases the API deleted (and
 * nothing else: what the control plane does not know of is left for it to take). A name
 * taken by a role the emulator did not make is refused (the apply_config fails). Passwords
 * travel only as SCRAM verifiers, inside the statements sent to the server, which logs no statements (settings.ts).
 */
export async function reconcile(
  client: PgClient,
  spec: BranchSpec,
  inDatabase: InDatabase,
  beforeRename: (database: string) => void = () => {},
  /** Told of roles whose sessions are about to be ended (a password reset, a drop). */
  beforeEndingSessions: (roles: string[]) => void = () => {},
): Promise<void> {
  await ensureMarks(client);
  const roles = await heldRoles(client);
  const existingRoles = new Map(roles.rows.map((r) => [r.rolname, r.adopted !== null]));
  const passwords = new Map(roles.rows.map((r) => [r.rolname, r.rolpassword]));
  const reset: string[] = [];
  // A folder made before roles had Neon's attributes and grants (its neon_superuser cannot
  // replicate): given them once. Later changes a user makes to a role's attributes (NOBYPASSRLS) are kept.
  const version = await versionNum(client);
  if (await lacksNeonGrants(client, version))
    for (const grant of neonSuperuserGrants(version)) await client.query(grant);
  if (roles.rows.some((r) => r.rolname === NEON_SUPERUSER && !r.rolreplication)) {
    await client.query(`ALTER ROLE ${NEON_SUPERUSER} ${NEON_SUPERUSER_ATTRIBUTES}`);
    for (const r of roles.rows)
      if (r.adopted === false) await client.query(`ALTER ROLE ${ident(r.rolname)} ${API_ROLE_ATTRIBUTES}`);
    const made = await databasesWithOrigins(client, "m.origin IS NOT NULL");
    for (const d of made.rows) await client.query(databaseGrant(ident(d.datname)));
  }
  // No role marked at all on a schema-only branch (or one made from it): the marks of a schema-only
  // copy an earlier build made were emptied with its tables (its copies took them so); the roles its
  // source's marks named are the control plane's (as databases, below).
  const marksLost = spec.fromSchemaOnly === true && roles.rows.every((r) => r.adopted === null);
  for (const role of spec.roles) {
    const login = role.noLogin ? "NOLOGIN" : "LOGIN";
    const managed = existingRoles.get(role.name);
    // A role the emulator did not make (cloud_admin, neon_superuser, pg_*) is never taken over,
    // unless the control plane took it from SQL (its verifier is known) and its mark did not land.
    if (managed === false && role.verifier === null && !marksLost)
      throw new Error(`role "${role.name}" already exists`);
    if (managed === false) await client.query(markRole(role.name, role.verifier !== null));
    if (managed === undefined) {
      // One transaction (one query of two statements): a server stopping between them would leave
      // a role without its mark, which the next reconcile could not tell from one SQL made.
      await client.query(
        `CREATE ROLE ${ident(role.name)} ${login} ${API_ROLE_ATTRIBUTES} IN ROLE ${NEON_SUPERUSER} PASSWORD ${passwordOf(role)};
         ${markRole(role.name, false)}`,
      );
    } else {
      if (!holdsPassword(passwords.get(role.name) ?? null, role)) reset.push(role.name);
      await client.query(`ALTER ROLE ${ident(role.name)} ${login} PASSWORD ${passwordOf(role)}`);
    }
  }
  // As Neon's reset_password says: the role's connections are dropped.
  if (reset.length) {
    beforeEndingSessions(reset);
    await endSessions(client, reset);
  }
  const dbs = await databasesWithOrigins(client);
  const byName = new Map(dbs.rows.map((d) => [d.datname, d]));
  const wanted = new Set(spec.databases.map((d) => d.name));
  // What the API deleted goes first: found by its mark, whatever the data names it now, or by its
  // name, unless it is still wanted as itself (a name deleted and made again through the API is
  // made afresh). Nothing else is dropped: a database the data holds that the control plane does
  // not know of (restored from before a drop, or made with SQL) stays, for the control plane to take.
  const wantedOrigins = new Set(spec.databases.map((d) => d.origin));
  const dropOrigins = new Set(spec.drops.databases.map((d) => d.origin));
  const dropNames = new Set(spec.drops.databases.map((d) => d.name));
  for (const d of dbs.rows) {
    const origin = originOf(d);
    if (origin === undefined || wantedOrigins.has(origin)) continue;
    if (dropOrigins.has(origin) || (dropNames.has(d.datname) && !wanted.has(d.datname))) {
      await dropSubscriptionsIn(client, d.datname, inDatabase);
      await client.query(`DROP DATABASE ${ident(d.datname)} WITH (FORCE)`);
      byName.delete(d.datname);
    }
  }
  await uncrossRenames(client, spec, byName, beforeRename);
  for (const db of spec.databases) {
    let current = byName.get(db.name);
    const renamed = [...byName.values()].find((d) => originOf(d) === db.origin && !wanted.has(d.datname));
    // The name is a database the control plane does not know (made with SQL a moment before it
    // took it): a rename onto it is refused, as Postgres refuses it, rather than that database
    // taken over. (An unmarked one, the template's default marked 0, or one marked as none of
    // the branch's databases (a copy's mark from the branch it was copied from, where the control
    // plane gave it another id) is taken when no other holds the origin; one the control plane
    // wants under another name moved aside above.)
    const origin = current && originOf(current);
    const ours = origin !== undefined && (wantedOrigins.has(origin) || dropOrigins.has(origin));
    if (current && (ours ? origin !== db.origin : renamed !== undefined))
      throw new Error(`database "${db.name}" already exists`);
    if (!current) {
      if (renamed) {
        // Sessions kept idle for clients go first; Postgres waits (up to 5 s) for them to end.
        beforeRename(renamed.datname);
        await client.query(`ALTER DATABASE ${ident(renamed.datname)} RENAME TO ${ident(db.name)}`);
        byName.delete(renamed.datname);
        current = { ...renamed, datname: db.name };
        byName.set(db.name, current);
      } else {
        // FILE_COPY (15+) copies the template's files instead of reading them through shared
        // buffers, which would leave ~15 MB of them in use in every new compute.
        const modern = version >= 150000;
        await client.query(
          `CREATE DATABASE ${ident(db.name)} OWNER ${ident(db.ownerName)}${modern ? " STRATEGY = FILE_COPY" : ""}`,
        );
        await client.query(databaseGrant(ident(db.name)));
        current = { datname: db.name, owner: db.ownerName, origin: null, granted: null };
        byName.set(db.name, current);
      }
    }
    if (current.owner !== db.ownerName)
      await client.query(`ALTER DATABASE ${ident(db.name)} OWNER TO ${ident(db.ownerName)}`);
    if (current.origin !== db.origin) await client.query(markDatabase(db.name, db.origin));
  }
  await grantInDatabases(
    client,
    spec.databases.map((d) => d.name),
    inDatabase,
  );
  // As Neon's compute does: what a deleted role owns in each database goes to that database's
  // owner (its grants are dropped), then the role.
  const wantedRoles = new Set(spec.roles.map((r) => r.name));
  const droppedRoles = new Set(spec.drops.roles);
  const dropped = [...existingRoles].filter(
    ([name, managed]) => managed && !wantedRoles.has(name) && droppedRoles.has(name),
  );
  if (dropped.length === 0) return;
  const live = await client.query<{ datname: string; owner: string; superuser: boolean }>(
    `SELECT d.datname, r.rolname AS owner, r.rolsuper AS superuser
       FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba
      WHERE d.datallowconn AND NOT d.datistemplate`,
  );
  for (const [name] of dropped) {
    beforeEndingSessions([name]);
    await dropRole(client, name, live.rows, inDatabase);
  }
}

/**
 * Renames that cross (two databases swapping names, a cycle, applied together): each database
 * whose name the control plane gives another, and which it wants under a name of its own, moves
 * aside (under a name nobody wants) and then to its own name, all in one transaction, so no
 * reader of the catalog meanwhile sees a name in between. One whose name another database holds
 * stays aside for reconcile, which finds it by its mark. `byName` follows.
 */
async function uncrossRenames(
  client: PgClient,
  spec: BranchSpec,
  byName: Map<string, HeldDatabase>,
  beforeRename: (database: string) => void,
): Promise<void> {
  const wantedName = new Map(spec.databases.map((d) => [d.origin, d.name]));
  const crossing: { held: HeldDatabase; aside: string; own: string }[] = [];
  for (const held of byName.values()) {
    const origin = originOf(held);
    const own = origin ? wantedName.get(origin) : undefined;
    const claimant = spec.databases.find((d) => d.name === held.datname);
    if (own && own !== held.datname && claimant && claimant.origin !== origin)
      crossing.push({ held, aside: `neon_emulator_renaming_${origin}`, own });
  }
  if (!crossing.length) return;
  for (const { held } of crossing) byName.delete(held.datname);
  const statements = crossing.map(
    ({ held, aside }) => `ALTER DATABASE ${ident(held.datname)} RENAME TO ${ident(aside)}`,
  );
  for (const { held, aside, own } of crossing) {
    const name = byName.has(own) ? aside : own;
    if (name === own) statements.push(`ALTER DATABASE ${ident(aside)} RENAME TO ${ident(own)}`);
    byName.set(name, { ...held, datname: name });
  }
  // Sessions kept idle for clients go first; Postgres waits (up to 5 s) for them to end.
  for (const { held } of crossing) beforeRename(held.datname);
  await client.query(statements.join(";\n"));
}

/**
 * Drops a role the API deleted. A database it owns that the control plane has not taken yet (made
 * with SQL a moment before) is refused, as the API refuses it. Its sessions end first (it logs in
 * no more), and with them their temporary objects; what it owns goes to each database's owner,
 * never to a superuser (the administrator owns `postgres`: neon_superuser takes it there), since
 * a SECURITY DEFINER function it made would then run as the superuser, and every compute's
 * server runs as the same user of the machine.
 */
async function dropRole(
  client: PgClient,
  name: string,
  databases: { datname: string; owner: string; superuser: boolean }[],
  inDatabase: InDatabase,
): Promise<void> {
  const owned = await client.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datdba = (SELECT oid FROM pg_roles WHERE rolname = $1)",
    [name],
  );
  if (owned.rows[0])
    throw new Error(
      `role "${name}" owns database "${owned.rows[0].datname}"; delete the database or change its owner first`,
    );
  await client.query(`ALTER ROLE ${ident(name)} NOLOGIN`);
  await endSessions(client, [name], 10_000);
  for (const db of databases) {
    const heir = db.superuser ? NEON_SUPERUSER : db.owner;
    await inDatabase(db.datname, async (c) => {
      await c.query(`REASSIGN OWNED BY ${ident(name)} TO ${ident(heir)}`);
      await c.query(`DROP OWNED BY ${ident(name)}`);
    });
  }
  await client.query(`DROP ROLE ${ident(name)}`);
}

/** Ends the sessions of `roles` (57P01), waiting up to `waitMs` for each to be gone. */
async function endSessions(client: PgClient, roles: string[], waitMs = 0): Promise<void> {
  await client.query(
    "SELECT pg_terminate_backend(pid, $2) FROM pg_stat_activity WHERE usename = ANY($1) AND pid <> pg_backend_pid()",
    [roles, waitMs],
  );
}

/** What identifies a spec's content (its passwords only hashed): equal when a reconcile would make the same. */
export const specFingerprint = (spec: BranchSpec) =>
  createHash("sha256").update(JSON.stringify(spec)).digest("base64");

/**
 * As Neon does before it drops a database: the subscriptions defined in it go first (Postgres
 * drops no database that has one), their slots on the publisher left there (`slot_name = NONE`).
 */
async function dropSubscriptionsIn(
  client: PgClient,
  database: string,
  inDatabase: InDatabase,
): Promise<void> {
  const found = await client.query<{ subname: string }>(
    "SELECT s.subname FROM pg_subscription s JOIN pg_database d ON d.oid = s.subdbid WHERE d.datname = $1",
    [database],
  );
  if (!found.rows.length) return;
  await inDatabase(database, async (c) => {
    for (const { subname } of found.rows) await dropSubscription(c, subname);
  });
}

/**
 * Drops a subscription (in the session's database) and leaves its slot on the publisher: disabled,
 * its slot unnamed (`slot_name = NONE`), then dropped. With `connection`, it is pointed there
 * first: DROP SUBSCRIPTION still reaches the publisher for the table synchronisation slots of
 * tables not yet synchronised, which a connection that fails at once leaves alone.
 */
export async function dropSubscription(
  client: PgClient,
  subname: string,
  connection?: string,
): Promise<void> {
  const name = ident(subname);
  await client.query(`ALTER SUBSCRIPTION ${name} DISABLE`);
  await client.query(`ALTER SUBSCRIPTION ${name} SET (slot_name = NONE)`);
  if (connection !== undefined)
    await client.query(`ALTER SUBSCRIPTION ${name} CONNECTION ${literal(connection)}`);
  await client.query(`DROP SUBSCRIPTION ${name}`);
}

/**
 * Whether the server holds `spec` as a reconcile would leave it, read only: every role marked as
 * the emulator's, with its login and its password (the control plane's, or the verifier SQL left),
 * every database with its owner and mark, nothing to drop, and neon_superuser with Neon's
 * attributes. A password that is not a SCRAM verifier of the control plane's counts as a difference.
 */
export async function holdsSpec(client: PgClient, spec: BranchSpec): Promise<boolean> {
  if (spec.drops.roles.length || spec.drops.databases.length || !(await hasMarks(client))) return false;
  const byRole = new Map((await heldRoles(client)).rows.map((r) => [r.rolname, r]));
  if (
    !byRole.get(NEON_SUPERUSER)?.rolreplication ||
    (await lacksNeonGrants(client, await versionNum(client)))
  )
    return false;
  for (const role of spec.roles) {
    const held = byRole.get(role.name);
    if (!held || held.adopted === null || held.rolcanlogin === role.noLogin) return false;
    if (!holdsPassword(held.rolpassword, role)) return false;
  }
  const byName = new Map((await databasesWithOrigins(client)).rows.map((d) => [d.datname, d]));
  return spec.databases.every((db) => {
    const held = byName.get(db.name);
    return held?.owner === db.ownerName && held.origin === db.origin && held.granted === true;
  });
}
