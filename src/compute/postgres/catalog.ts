import type {
  CatalogTaken,
  ServerDatabase,
  ServerRole,
} from "../../control-plane/roles-databases/service.js";
import type { PgClient } from "../../platform/pg.js";
import { ADMIN_USER, type Administrator } from "./admin.js";
import { databasesWithOrigins, markDatabase, markRole, NEON_SUPERUSER } from "./reconcile.js";

/** How long reading a server's roles may take (its login, each query). */
const ROLE_READ_TIMEOUT_MS = 2000;
/** How long an administrator's session kept for reading roles may stay unused. */
const ROLE_READER_IDLE_MS = 10_000;

/**
 * Where a branch's roles and databases as its running primary holds them go (the control plane's
 * copy, which returns what it took: roles to mark as the emulator's, databases to mark with their
 * origin id).
 */
export type CatalogSink = (
  branchId: string,
  server: { roles: ServerRole[]; databases: ServerDatabase[] },
) => CatalogTaken;

/**
 * Hands the roles and databases the branch's primary holds (read through the administrator's
 * `client`) to `sink`, and marks those it took; returns the enabled subscriptions the server holds.
 */
export async function takeCatalog(
  sink: CatalogSink | undefined,
  branchId: string,
  client: PgClient,
): Promise<number> {
  if (!sink) return 0;
  const roles = await client.query<{
    rolname: string;
    rolpassword: string | null;
    rolcanlogin: boolean;
  }>(
    `SELECT rolname, rolpassword, rolcanlogin FROM pg_authid
      WHERE left(rolname, 3) <> 'pg_' AND rolname <> ALL($1) ORDER BY oid`,
    [[ADMIN_USER, NEON_SUPERUSER]],
  );
  // Not one a DROP cut short left invalid (Postgres 15.4+): it is going.
  const databases = await databasesWithOrigins(client, "d.datname <> 'postgres' AND d.datconnlimit <> -2");
  const subscriptions = await enabledSubscriptions(client);
  const taken = sink(branchId, {
    roles: roles.rows.map((r) => ({ name: r.rolname, verifier: r.rolpassword, canLogin: r.rolcanlogin })),
    databases: databases.rows.map((d) => ({
      name: d.datname,
      owner: d.owner,
      id: d.origin ?? undefined,
    })),
  });
  // One renamed or dropped since the read is left for the next read.
  for (const name of taken.roles) await client.query(markRole(name, true)).catch(() => {});
  for (const db of taken.databases) await client.query(markDatabase(db.name, db.id)).catch(() => {});
  return subscriptions;
}

/** The enabled logical replication subscriptions of a server (pg_subscription is shared by its databases). */
export async function enabledSubscriptions(client: PgClient): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_subscription WHERE subenabled",
  );
  return rows[0]?.n ?? 0;
}

interface Reader {
  client: Promise<PgClient>;
  used: number;
  /** The last user's end: users take turns, as a session runs one query at a time. */
  tail: Promise<unknown>;
}

/**
 * An administrator's session per running server, kept while logins read roles through it (a
 * login's role read costs a query, not a login), closed after ROLE_READER_IDLE_MS unused.
 */
export class RoleReaders {
  private readonly readers = new Map<string, Reader>();

  constructor(private readonly admin: Administrator) {}

  /** Runs `work` on the endpoint's reader (on the server at `port`) once its users before have done with it. */
  session<T>(endpointId: string, port: number, work: (client: PgClient) => Promise<T>): Promise<T> {
    const entry = this.reader(endpointId, port);
    const turn = entry.tail.then(() => entry.client).then(work);
    entry.tail = turn.catch(() => {});
    return turn;
  }

  /** Ends the endpoint's reader (its server stops). */
  drop(endpointId: string): void {
    const kept = this.readers.get(endpointId);
    this.readers.delete(endpointId);
    if (kept) void kept.client.then((c) => c.end()).catch(() => {});
  }

  private reader(endpointId: string, port: number): Reader {
    const kept = this.readers.get(endpointId);
    if (kept) {
      kept.used = Date.now();
      return kept;
    }
    const entry: Reader = {
      client: this.admin.connected(port, "postgres", ROLE_READ_TIMEOUT_MS),
      used: Date.now(),
      tail: Promise.resolve(),
    };
    const drop = () => {
      if (this.readers.get(endpointId) === entry) this.readers.delete(endpointId);
      clearInterval(idle);
      void entry.client.then((client) => client.end()).catch(() => {});
    };
    const idle = setInterval(() => {
      if (Date.now() - entry.used > ROLE_READER_IDLE_MS) drop();
    }, ROLE_READER_IDLE_MS);
    idle.unref();
    entry.client.then((client) => {
      client.on("error", drop);
      client.on("end", drop);
    }, drop);
    this.readers.set(endpointId, entry);
    return entry;
  }
}
