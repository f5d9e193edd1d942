import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { type PgClient, pg } from "../../platform/pg.js";
import type { DataLayout } from "./layout.js";
import { majorOnPort } from "./process.js";

/** The cluster superuser the emulator administers branches as (Neon's name for it); clients never log in as it. */
export const ADMIN_USER = "cloud_admin";

/** SQLSTATE of a session ended by transaction_timeout (Postgres 17+). */
export const TRANSACTION_TIMEOUT = "25P04";

/** An administrator's login ended by the server's transaction_timeout: tries in all, and the pause between. */
const LOGIN_ATTEMPTS = 5;
const LOGIN_RETRY_MS = 100;

/**
 * Settings of every session of the administrator, given as the client's options, which come before
 * those a database's owner attaches to it (ALTER DATABASE … SET) and an endpoint's pg_settings:
 * the administrator works in users' databases. pg_stat_statements (readable by neon_superuser's
 * members) keeps none of its statements; built-in names resolve to the catalog's alone (a
 * database's search_path could put a user's function before a built-in one); the session stays
 * the administrator's (role); no read-only default or timeout stops its work (transaction_timeout:
 * Postgres 17+), and its commits wait for no synchronous standby (synchronous_standby_names).
 */
function adminSessionOptions(major: number | undefined): string {
  return [
    "pg_stat_statements.track=none",
    "search_path=pg_catalog,pg_temp",
    "role=none",
    "default_transaction_read_only=off",
    "statement_timeout=0",
    "lock_timeout=0",
    "idle_in_transaction_session_timeout=0",
    "idle_session_timeout=0",
    "synchronous_commit=local",
    ...((major ?? 0) >= 17 ? ["transaction_timeout=0"] : []),
  ]
    .map((setting) => `-c ${setting}`)
    .join(" ");
}

/**
 * The emulator's sessions as ADMIN_USER on the servers it runs. Its password is made once per data
 * folder (`<data>/admin-password`, readable by the emulator alone) and given to every cluster at
 * its initdb.
 */
export class Administrator {
  private cached: string | undefined;

  constructor(private readonly layout: DataLayout) {}

  password(): string {
    if (this.cached) return this.cached;
    const file = this.layout.adminPassword();
    if (!fs.existsSync(file)) {
      fs.mkdirSync(this.layout.dataDir, { recursive: true, mode: 0o711 });
      fs.writeFileSync(file, randomBytes(24).toString("hex"), { mode: 0o600, flag: "wx" });
    }
    this.cached = fs.readFileSync(file, "utf8").trim();
    return this.cached;
  }

  /** A session on the server at `port`, used by `use` and ended after; `timeoutMs` bounds its login and each query. */
  async session<T>(
    port: number,
    use: (client: PgClient) => Promise<T>,
    database = "postgres",
    timeoutMs?: number,
    major?: number,
  ): Promise<T> {
    const client = await this.connected(port, database, timeoutMs, major);
    try {
      return await use(client);
    } finally {
      await client.end().catch(() => {});
    }
  }

  /**
   * A session, logged in (the caller ends it). The administrator's transaction_timeout=0 applies
   * only once it is in: a login the server ends for an endpoint's shorter one (its pg_settings; a
   * busy machine's login takes longer than 50 ms) is tried again, LOGIN_ATTEMPTS times in all.
   */
  async connected(port: number, database: string, timeoutMs?: number, major?: number): Promise<PgClient> {
    for (let attempt = 1; ; attempt++) {
      const client = this.client(port, database, timeoutMs, major);
      try {
        await client.connect();
        return client;
      } catch (err) {
        await client.end().catch(() => {});
        if ((err as { code?: string }).code !== TRANSACTION_TIMEOUT || attempt === LOGIN_ATTEMPTS) throw err;
        await new Promise((resolve) => setTimeout(resolve, LOGIN_RETRY_MS));
      }
    }
  }

  /**
   * A client (not yet connected) for the server at `port`, of Postgres `major` (known for the
   * servers this process runs); `timeoutMs` bounds its login and each query.
   */
  private client(port: number, database: string, timeoutMs?: number, major = majorOnPort(port)): PgClient {
    const client = new (pg().Client)({
      host: "127.0.0.1",
      port,
      user: ADMIN_USER,
      password: this.password(),
      database,
      options: adminSessionOptions(major),
      ...(timeoutMs ? { connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs } : {}),
    });
    // A server that stops meanwhile ends the session: the query under way fails with it, and
    // the end itself (between queries) must not be an unhandled error.
    client.on("error", () => {});
    return client;
  }
}
