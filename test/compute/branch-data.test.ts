import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  behindTheBack,
  computeClient,
  fileFlags,
  startComputeServer,
  takesTopMark,
} from "../helpers/compute.js";
import { type RunningServer, randomKey } from "../helpers/server.js";

/**
 * What the API reads from and does to a branch's real data (NEON_EMULATOR_COMPUTE=postgres): its
 * schema and the difference from another branch's. One server for the file.
 */
let server: RunningServer;
let dir: string;
const key = randomKey();

beforeAll(async () => {
  ({ server, dir } = await startComputeServer(key, {
    NEON_EMULATOR_OPERATION_MS:
      "start_compute=20,suspend_compute=20,create_timeline=20,create_branch=20,apply_config=20",
  }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const { api, allSettled, clientOf, query } = computeClient(() => server, key);
const { asAdmin } = behindTheBack(() => dir);

/**
 * A new project, its operations finished: its id, what POST /projects answered, SQL on its main
 * compute (or `at`) as its owner in neondb, and branches of it with a compute.
 */
async function freshProject(name: string) {
  const res = await api("POST", "/projects", { project: { name } });
  expect(res.status).toBe(201);
  const p: string = res.body.project.id;
  await allSettled(p, res.body.operations);
  const [owner] = res.body.roles;
  const endpoint: string = res.body.endpoints[0].id;
  const on = (sql: string, at = endpoint) => query(at, owner.name, owner.password, "neondb", sql);
  /** A branch of it (`fields` of its create) with a read_write compute, its operations finished. */
  const branch = async (fields: Record<string, unknown>) => {
    const made = await api("POST", `/projects/${p}/branches`, {
      branch: fields,
      endpoints: [{ type: "read_write" }],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await allSettled(p, made.body.operations);
    return { id: made.body.branch.id as string, endpoint: made.body.endpoints[0].id as string };
  };
  return { p, res, endpoint, owner, on, branch };
}

let projectId = "";
let mainId = "";
let mainEndpoint = "";
let role = "";
let password = "";

describe("a branch's schema", () => {
  it("is what pg_dump --schema-only prints of the branch's database, read from its running compute", async () => {
    const res = await api("POST", "/projects", { project: { name: "schemas" } });
    expect(res.status).toBe(201);
    await allSettled(res.body.project.id, res.body.operations);
    projectId = res.body.project.id;
    mainId = res.body.branch.id;
    mainEndpoint = res.body.endpoints[0].id;
    role = res.body.roles[0].name;
    password = res.body.roles[0].password;
    await query(
      mainEndpoint,
      role,
      password,
      "neondb",
      "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)",
    );

    const schema = await api("GET", `/projects/${projectId}/branches/${mainId}/schema?db_name=neondb`);
    expect(schema.status).toBe(200);
    expect(schema.body.sql).toContain("-- PostgreSQL database dump");
    expect(schema.body.sql).toContain(
      "CREATE TABLE public.items (\n    id integer NOT NULL,\n    name text NOT NULL\n);",
    );
    expect(schema.body.sql).toContain("ADD CONSTRAINT items_pkey PRIMARY KEY (id);");
  });

  it("compare_schema diffs a branch against its parent; a branch without a running compute is read too", async () => {
    const res = await api("POST", `/projects/${projectId}/branches`, { branch: { name: "cold" } });
    expect(res.status).toBe(201);
    await allSettled(projectId, res.body.operations);
    const cold = res.body.branch.id;
    const same = await api("GET", `/projects/${projectId}/branches/${cold}/compare_schema?db_name=neondb`);
    expect(same.status).toBe(200);
    expect(same.body).toEqual({ diff: "" });
    // No compute ran on the branch to answer, and none is left running.
    expect(
      fs.existsSync(path.join(dir, "db-data", "projects", projectId, "branches", cold, "postmaster.pid")),
    ).toBe(false);

    await query(mainEndpoint, role, password, "neondb", "ALTER TABLE items ADD COLUMN extra integer");
    const diff = await api(
      "GET",
      `/projects/${projectId}/branches/${mainId}/compare_schema?db_name=neondb&base_branch_id=${cold}`,
    );
    expect(diff.status).toBe(200);
    expect(diff.body.diff).toMatch(/^--- a\/neondb\n\+\+\+ b\/neondb\n@@ /);
    expect(diff.body.diff).toContain(
      "-    name text NOT NULL\n+    name text NOT NULL,\n+    extra integer\n",
    );
  });

  it("answers 4xx for an unknown database, a branch with no parent, and a time before its history", async () => {
    const b = `/projects/${projectId}/branches/${mainId}`;
    const unknown = await api("GET", `${b}/schema?db_name=nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain('database "nope" not found');
    expect((await api("GET", `${b}/schema`)).status).toBe(400);
    const orphan = await api("GET", `${b}/compare_schema?db_name=neondb`);
    expect(orphan.status).toBe(400);
    expect(orphan.body.message).toContain("has no parent");
    const pitr = await api("GET", `${b}/schema?db_name=neondb&timestamp=2025-01-01T00:00:00Z`);
    expect(pitr.status).toBe(400);
    expect(pitr.body.message).toContain("is before branch");
  });
});

describe("restoring a branch", () => {
  it("replaces its data with its parent's head, keeps its compute and connection string, and can keep the old state", async () => {
    const made = await api("POST", `/projects/${projectId}/branches`, {
      branch: { name: "work" },
      endpoints: [{ type: "read_write" }],
    });
    expect(made.status).toBe(201);
    await allSettled(projectId, made.body.operations);
    const work = made.body.branch.id;
    const endpoint = made.body.endpoints[0].id;
    const { parent_lsn: madeAt, parent_timestamp: madeWhen } = (
      await api("GET", `/projects/${projectId}/branches/${work}`)
    ).body.branch;
    await query(endpoint, role, password, "neondb", "CREATE TABLE only_work (n int)");
    await query(endpoint, role, password, "neondb", "INSERT INTO only_work VALUES (42)");
    await query(
      mainEndpoint,
      role,
      password,
      "neondb",
      "INSERT INTO items (id, name) VALUES (7, 'from main')",
    );

    // A client goes on writing after the restore is asked for, until the swap ends its session:
    // every write it saw committed is in the branch that keeps the previous state.
    const writer = clientOf(endpoint, role, password, "neondb");
    writer.on("error", () => {});
    await writer.connect();
    let acknowledged = 42;
    const writing = (async () => {
      for (let n = 43; ; n++) {
        await writer.query("INSERT INTO only_work VALUES ($1)", [n]);
        acknowledged = n;
      }
    })().catch(() => {});
    await new Promise((r) => setTimeout(r, 100));
    const restored = await api("POST", `/projects/${projectId}/branches/${work}/restore`, {
      source_branch_id: mainId,
      preserve_under_name: "work_before",
    });
    expect(restored.status).toBe(200);
    // Asked for at once, as a script would, retried while it answers 423 (the restore under way):
    // a branch made from it and its schema hold what the restore brought, never what it replaced.
    const untilUnlocked = async (method: string, url: string, body?: unknown) => {
      for (;;) {
        const res = await api(method, url, body);
        if (res.status !== 423) return res;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const schema = await untilUnlocked(
      "GET",
      `/projects/${projectId}/branches/${work}/schema?db_name=neondb`,
    );
    expect(schema.status).toBe(200);
    expect(schema.body.sql).not.toContain("only_work");
    const child = await untilUnlocked("POST", `/projects/${projectId}/branches`, {
      branch: { name: "work_child", parent_id: work },
      endpoints: [{ type: "read_write" }],
    });
    expect(child.status).toBe(201);
    await allSettled(projectId, restored.body.operations);
    await allSettled(projectId, child.body.operations);
    expect(
      await query(
        child.body.endpoints[0].id,
        role,
        password,
        "neondb",
        "SELECT name FROM items WHERE id = 7",
      ),
    ).toEqual([{ name: "from main" }]);
    await expect(
      query(child.body.endpoints[0].id, role, password, "neondb", "SELECT * FROM only_work"),
    ).rejects.toMatchObject({ code: "42P01" });
    expect((await api("DELETE", `/projects/${projectId}/branches/${child.body.branch.id}`)).status).toBe(200);
    await writing;
    await writer.end().catch(() => {});

    // The same endpoint, the same connection string: the parent's data now.
    expect(await query(endpoint, role, password, "neondb", "SELECT name FROM items WHERE id = 7")).toEqual([
      { name: "from main" },
    ]);
    await expect(query(endpoint, role, password, "neondb", "SELECT * FROM only_work")).rejects.toMatchObject({
      code: "42P01",
    });
    const branch = (await api("GET", `/projects/${projectId}/branches/${work}`)).body.branch;
    expect(branch).toMatchObject({ current_state: "ready", parent_id: mainId });
    expect(branch.parent_lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);

    // The previous state lives on as its own branch.
    const list = (await api("GET", `/projects/${projectId}/branches`)).body.branches as {
      id: string;
      name: string;
    }[];
    const kept = list.find((b) => b.name === "work_before")?.id;
    expect(kept).toBeDefined();
    // It is where the branch was: made at the same point of the same parent.
    expect((await api("GET", `/projects/${projectId}/branches/${kept}`)).body.branch).toMatchObject({
      parent_id: mainId,
      parent_lsn: madeAt,
      parent_timestamp: madeWhen,
    });
    const ep = await api("POST", `/projects/${projectId}/endpoints`, {
      endpoint: { branch_id: kept, type: "read_write" },
    });
    expect(ep.status).toBe(201);
    await allSettled(projectId, ep.body.operations);
    // (The last may have committed with its answer lost to the swap: at most one more.)
    const [kept42] = await query(
      ep.body.endpoint.id,
      role,
      password,
      "neondb",
      "SELECT count(*)::int AS n, max(n) AS top FROM only_work",
    );
    expect(kept42?.top).toBeGreaterThanOrEqual(acknowledged);
    expect(kept42?.top).toBeLessThanOrEqual(acknowledged + 1);
    expect(kept42?.n).toBe((kept42?.top as number) - 41);
    expect(
      await query(
        ep.body.endpoint.id,
        role,
        password,
        "neondb",
        "SELECT count(*)::int AS n FROM items WHERE id = 7",
      ),
    ).toEqual([{ n: 0 }]);
  });
});

describe("snapshots", () => {
  it("keep a branch's data as it was; a finalized restore puts it back behind the same connection string", async () => {
    const before = await query(
      mainEndpoint,
      role,
      password,
      "neondb",
      "SELECT count(*)::int AS n FROM items",
    );
    const taken = await api("POST", `/projects/${projectId}/branches/${mainId}/snapshot?name=before-wipe`);
    expect(taken.status).toBe(200);
    expect(taken.body.snapshot.full_size).toBeGreaterThan(1_000_000);
    expect(taken.body.snapshot.lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const snapshotDir = path.join(dir, "db-data", "projects", projectId, "snapshots", taken.body.snapshot.id);
    expect(fs.existsSync(path.join(snapshotDir, "PG_VERSION"))).toBe(true);

    await query(mainEndpoint, role, password, "neondb", "DELETE FROM items");
    const restored = await api("POST", `/projects/${projectId}/snapshots/${taken.body.snapshot.id}/restore`, {
      finalize_restore: true,
    });
    expect(restored.status).toBe(200);
    await allSettled(projectId, restored.body.operations);
    // The compute moved to the restored branch and runs on the snapshot's data.
    expect(
      await query(mainEndpoint, role, password, "neondb", "SELECT count(*)::int AS n FROM items"),
    ).toEqual(before);
    expect(before[0]?.n).toBeGreaterThan(0);

    const deleted = await api("DELETE", `/projects/${projectId}/snapshots/${taken.body.snapshot.id}`);
    expect(deleted.status).toBe(202);
    for (let i = 0; i < 100 && fs.existsSync(snapshotDir); i++) await new Promise((r) => setTimeout(r, 50));
    expect(fs.existsSync(snapshotDir)).toBe(false);
  });
});

describe("a copy of a branch whose compute a suspend stops meanwhile", () => {
  it("copies the folder the stop left: a child and a snapshot hold every row, and no operation fails", async () => {
    const made = await api("POST", "/projects", {
      project: { name: "copy-meets-suspend", default_endpoint_settings: { suspend_timeout_seconds: -1 } },
    });
    expect(made.status).toBe(201);
    await allSettled(made.body.project.id, made.body.operations);
    const p = {
      id: made.body.project.id as string,
      branch: made.body.branch.id as string,
      endpoint: made.body.endpoints[0].id as string,
      role: made.body.roles[0].name as string,
      password: made.body.roles[0].password as string,
    };
    const count = async (endpoint: string) =>
      (await query(endpoint, p.role, p.password, "neondb", "SELECT count(*)::int AS n FROM t"))[0]?.n;
    await query(
      p.endpoint,
      p.role,
      p.password,
      "neondb",
      "CREATE TABLE t AS SELECT generate_series(1, 100) AS n",
    );
    /** Rows written (waking the compute), then a suspend, then `copy` after `delay` ms. */
    const suspendThen = async (delay: number, copy: () => Promise<void>) => {
      await query(p.endpoint, p.role, p.password, "neondb", "INSERT INTO t SELECT generate_series(1, 10)");
      const suspended = await api("POST", `/projects/${p.id}/endpoints/${p.endpoint}/suspend`);
      expect(suspended.status).toBe(200);
      await new Promise((r) => setTimeout(r, delay));
      await copy();
      await allSettled(p.id, suspended.body.operations);
    };
    let rows = 100;
    for (const delay of [0, 50, 150]) {
      rows += 10;
      await suspendThen(delay, async () => {
        const child = await api("POST", `/projects/${p.id}/branches`, {
          branch: { parent_id: p.branch },
          endpoints: [{ type: "read_write" }],
        });
        expect(child.status).toBe(201);
        await allSettled(p.id, child.body.operations);
        expect(await count(child.body.endpoints[0].id)).toBe(rows);
      });
      rows += 10;
      await suspendThen(delay, async () => {
        const snapshot = await api("POST", `/projects/${p.id}/branches/${p.branch}/snapshot?name=s${delay}`);
        expect(snapshot.status).toBe(200);
      });
    }
    expect((await api("DELETE", `/projects/${p.id}`)).status).toBe(200);
  }, 120_000);
});

describe("a schema-only branch", () => {
  it("is a root branch with the source's roles, databases and definitions, and none of its rows", async () => {
    const res = await api("POST", "/projects", { project: { name: "sensitive" } });
    expect(res.status).toBe(201);
    await allSettled(res.body.project.id, res.body.operations);
    const p = res.body.project.id;
    const source = {
      endpoint: res.body.endpoints[0].id,
      role: res.body.roles[0].name,
      pw: res.body.roles[0].password,
    };
    for (const name of ["ledger", "vault"]) {
      const made = await api("POST", `/projects/${p}/branches/${res.body.branch.id}/databases`, {
        database: { name, owner_name: source.role },
      });
      await allSettled(p, made.body.operations);
    }
    const onSource = (db: string, sql: string) => query(source.endpoint, source.role, source.pw, db, sql);
    const port = (await onSource("neondb", "SHOW port"))[0].port;
    await onSource("ledger", "CREATE TABLE entries AS SELECT g AS amount FROM generate_series(1, 10) g");
    await onSource("ledger", "CREATE TABLE old_events AS SELECT 1 AS id, date '2020-05-01' AS at");
    await onSource(
      "vault",
      "CREATE TABLE keys AS SELECT 'vault secret ' || g AS k FROM generate_series(1, 5) g",
    );
    // A database its owner closed to connections is emptied too, and so is one whose owner made
    // its sessions read-only and put a role of theirs in them.
    await onSource("neondb", "ALTER DATABASE vault ALLOW_CONNECTIONS false");
    await onSource("neondb", "ALTER DATABASE ledger SET default_transaction_read_only = on");
    await onSource("neondb", `ALTER DATABASE ledger SET role = ${source.role}`);
    await onSource(
      "neondb",
      `CREATE TABLE patients (id serial PRIMARY KEY, name text NOT NULL);
       CREATE TABLE visits (id int GENERATED ALWAYS AS IDENTITY, patient int REFERENCES patients);
       CREATE TABLE audit (who text);
       CREATE FUNCTION note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO public.audit VALUES (current_user); RETURN NULL; END $$;
       -- A trigger its owner made fire always (even under replication): it must not run as the administrator.
       CREATE TRIGGER noted AFTER TRUNCATE ON patients FOR EACH STATEMENT EXECUTE FUNCTION note();
       ALTER TABLE patients ENABLE ALWAYS TRIGGER noted;
       INSERT INTO patients (name) SELECT 'patient ' || g FROM generate_series(1, 50) g;
       INSERT INTO visits (patient) SELECT id FROM patients;
       CREATE MATERIALIZED VIEW names AS SELECT name FROM patients;
       CREATE INDEX patients_name ON patients (name);
       SELECT lo_from_bytea(0, 'scan of a passport');
       ANALYZE patients;
       -- A partitioned table with a foreign partition: its rows live in the source's ledger.
       CREATE EXTENSION postgres_fdw;
       CREATE SERVER archive FOREIGN DATA WRAPPER postgres_fdw
         OPTIONS (host '127.0.0.1', port '${port}', dbname 'ledger');
       CREATE USER MAPPING FOR PUBLIC SERVER archive OPTIONS (user '${source.role}', password '${source.pw}');
       CREATE TABLE events (id int, at date) PARTITION BY RANGE (at);
       CREATE TABLE events_new PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2030-01-01');
       CREATE FOREIGN TABLE events_old PARTITION OF events FOR VALUES FROM ('2000-01-01') TO ('2025-01-01')
         SERVER archive OPTIONS (table_name 'old_events');
       INSERT INTO events_new VALUES (2, '2025-06-01');`,
    );

    // What `neon branches create --schema-only` sends.
    const branch = await api("POST", `/projects/${p}/branches`, {
      branch: { name: "masked", init_source: "schema-only" },
      endpoints: [{ type: "read_write" }],
    });
    expect(branch.status).toBe(201);
    expect(branch.body.branch).toMatchObject({ name: "masked", init_source: "schema-only" });
    expect(branch.body.branch.parent_id).toBeUndefined();
    expect(branch.body.roles.map((r: { name: string }) => r.name)).toEqual([source.role]);
    expect(branch.body.databases.map((d: { name: string }) => d.name).sort()).toEqual([
      "ledger",
      "neondb",
      "vault",
    ]);
    await allSettled(p, branch.body.operations);
    const ready = await api("GET", `/projects/${p}/branches/${branch.body.branch.id}`);
    expect(ready.body.branch).toMatchObject({ current_state: "ready", init_source: "schema-only" });
    expect(ready.body.branch.parent_id).toBeUndefined();
    expect(ready.body.branch.parent_lsn).toBeUndefined();

    const uri = branch.body.connection_uris[0].connection_parameters;
    const onMasked = (db: string, sql: string) =>
      query(branch.body.endpoints[0].id, uri.role, uri.password, db, sql);
    // Every definition is there: the schema reads the same as the source's.
    const schemaOf = async (b: string) =>
      (await api("GET", `/projects/${p}/branches/${b}/schema?db_name=neondb`)).body.sql;
    expect(await schemaOf(branch.body.branch.id)).toBe(await schemaOf(res.body.branch.id));
    expect(
      await onMasked(
        "neondb",
        `SELECT (SELECT count(*)::int FROM patients) AS patients, (SELECT count(*)::int FROM visits) AS visits,
                (SELECT count(*)::int FROM audit) AS audit,
                (SELECT count(*)::int FROM pg_largeobject_metadata) AS large_objects,
                (SELECT count(*)::int FROM pg_stats WHERE tablename = 'patients') AS stats,
                (SELECT relispopulated FROM pg_class WHERE relname = 'names') AS populated,
                (SELECT tgenabled FROM pg_trigger WHERE tgname = 'noted') AS trigger,
                (SELECT count(*)::int FROM events_new) AS events,
                (SELECT datallowconn FROM pg_database WHERE datname = 'vault') AS vault_open`,
      ),
    ).toEqual([
      {
        patients: 0,
        visits: 0,
        audit: 0,
        large_objects: 0,
        stats: 0,
        populated: false,
        trigger: "A",
        events: 0,
        vault_open: false,
      },
    ]);
    // Sequences and identities start again; the other database is empty too.
    expect(await onMasked("neondb", "INSERT INTO patients (name) VALUES ('test') RETURNING id")).toEqual([
      { id: 1 },
    ]);
    expect(await onMasked("neondb", "INSERT INTO visits (patient) VALUES (1) RETURNING id")).toEqual([
      { id: 1 },
    ]);
    expect(await onMasked("ledger", "SELECT count(*)::int AS n FROM entries")).toEqual([{ n: 0 }]);
    // No file of the branch's folder holds the rows' bytes (tables, catalogs, WAL, saved statistics).
    const folder = path.join(dir, "db-data", "projects", p, "branches", branch.body.branch.id);
    const holding: string[] = [];
    for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const bytes = fs.readFileSync(file);
      if (["patient 17", "scan of a passport", "vault secret"].some((marker) => bytes.includes(marker)))
        holding.push(file);
    }
    expect(holding).toEqual([]);
    // The source keeps its rows, the foreign partition's among them (the copy never reached them).
    expect(await onSource("neondb", "SELECT count(*)::int AS n FROM patients")).toEqual([{ n: 50 }]);
    expect(await onSource("ledger", "SELECT count(*)::int AS n FROM old_events")).toEqual([{ n: 1 }]);

    // It takes API changes as any branch does: a role made through the API logs in, owning a
    // database made through the API (the copy keeps the emulator's marks of its roles).
    const masked = { projectId: p, branchId: branch.body.branch.id, endpoint: branch.body.endpoints[0].id };
    const roleLogsIn = async (name: string) => {
      const made = await api("POST", `/projects/${p}/branches/${masked.branchId}/roles`, { role: { name } });
      expect(made.status).toBe(201);
      await allSettled(p, made.body.operations);
      const db = await api("POST", `/projects/${p}/branches/${masked.branchId}/databases`, {
        database: { name: `${name}_db`, owner_name: name },
      });
      await allSettled(p, db.body.operations);
      expect(
        await query(masked.endpoint, name, made.body.role.password, `${name}_db`, "SELECT current_user AS u"),
      ).toEqual([{ u: name }]);
    };
    await roleLogsIn("analyst");
    // A schema-only branch an earlier build made lost those marks: its next start takes the roles
    // the control plane names as its own again.
    await asAdmin(masked, "TRUNCATE neon_emulator.roles, neon_emulator.databases");
    const restart = await api("POST", `/projects/${p}/endpoints/${masked.endpoint}/restart`);
    await allSettled(p, restart.body.operations);
    await roleLogsIn("auditor");

    // Of a protected branch, its roles get new passwords, as any child of a protected branch's does:
    // the one handed out logs in, the source's no longer does.
    const protect = await api("PATCH", `/projects/${p}/branches/${res.body.branch.id}`, {
      branch: { protected: true },
    });
    expect(protect.status).toBe(200);
    await allSettled(p, protect.body.operations);
    const guarded = await api("POST", `/projects/${p}/branches`, {
      branch: { name: "masked-protected", init_source: "schema-only" },
      endpoints: [{ type: "read_write" }],
    });
    expect(guarded.status).toBe(201);
    await allSettled(p, guarded.body.operations);
    const fresh = guarded.body.connection_uris[0].connection_parameters;
    expect(fresh.password).not.toBe(source.pw);
    const endpoint = guarded.body.endpoints[0].id;
    expect(await query(endpoint, fresh.role, fresh.password, "neondb", "SELECT 1 AS one")).toEqual([
      { one: 1 },
    ]);
    await expect(query(endpoint, fresh.role, source.pw, "neondb", "SELECT 1")).rejects.toMatchObject({
      code: "28P01",
    });
    const unprotect = await api("PATCH", `/projects/${p}/branches/${res.body.branch.id}`, {
      branch: { protected: false },
    });
    await allSettled(p, unprotect.body.operations);
    expect((await api("DELETE", `/projects/${p}`)).status).toBe(200);
  }, 120_000);
});

describe("branches of a running parent's head asked for at once", () => {
  it("share a copy of it: creates asked for while a backup of the parent runs get that one (the same parent_lsn), and none answered with its point holds what the parent wrote after", async () => {
    const { p, on } = await freshProject("burst");
    // ~70 MB, so that a backup of it takes a while.
    await on("CREATE TABLE big AS SELECT g, repeat('x', 200) AS pad FROM generate_series(1, 300000) g");
    const made = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        api("POST", `/projects/${p}/branches`, { branch: { name: `burst-${i}` } }),
      ),
    );
    await on("INSERT INTO big VALUES (0, 'written after the answers')");
    expect(made.map((m) => m.status)).toEqual(made.map(() => 201));
    // One backup each, they all had LSNs of their own (a copy switches the parent's WAL segment):
    // those that shared one share its LSN. (On a busy machine some copies take longer than the
    // 2 s a create waits: those are answered with no parent_lsn, as the README says.)
    const answered = made.filter((m) => m.body.branch.parent_lsn !== undefined);
    const lsns = answered.map((m) => m.body.branch.parent_lsn as string);
    expect(lsns.length).toBeGreaterThan(1);
    expect(new Set(lsns).size).toBeLessThan(lsns.length);
    for (const m of made) await allSettled(p, m.body.operations);
    for (const m of [answered[0], answered.at(-1)]) {
      const compute = await api("POST", `/projects/${p}/endpoints`, {
        endpoint: { branch_id: m?.body.branch.id, type: "read_write" },
      });
      expect(compute.status).toBe(201);
      await allSettled(p, compute.body.operations);
      expect(await on("SELECT count(*)::int AS n, min(g) AS low FROM big", compute.body.endpoint.id)).toEqual(
        [{ n: 300_000, low: 1 }],
      );
      const removed = await api("DELETE", `/projects/${p}/endpoints/${compute.body.endpoint.id}`);
      await allSettled(p, removed.body.operations);
    }
    expect((await api("DELETE", `/projects/${p}`)).status).toBe(200);
  }, 120_000);
});

describe("a point of a branch's history, to the microsecond", () => {
  it("parent_timestamp: a commit stamped at the time asked is in the branch, and one stamped a microsecond after is not", async () => {
    const { p, endpoint, on, branch } = await freshProject("micros");
    // Postgres stamps commits to the microsecond; track_commit_timestamp shows the stamp (read at start).
    const settings = await api("PATCH", `/projects/${p}/endpoints/${endpoint}`, {
      endpoint: { settings: { pg_settings: { track_commit_timestamp: "on" } } },
    });
    await allSettled(p, settings.body.operations);
    const restart = await api("POST", `/projects/${p}/endpoints/${endpoint}/restart`);
    await allSettled(p, restart.body.operations);
    await on("CREATE TABLE stamps (v int)");
    for (const v of [1, 2, 3]) await on(`INSERT INTO stamps VALUES (${v})`);
    const format = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
    const [stamp] = await on(
      `SELECT to_char(t AT TIME ZONE 'UTC', ${format}) AS at,
              to_char((t - interval '1 microsecond') AT TIME ZONE 'UTC', ${format}) AS before
         FROM (SELECT pg_xact_commit_timestamp(xmin) AS t FROM stamps WHERE v = 2) c`,
    );
    const rowsAt = async (name: string, parent_timestamp: string) =>
      (await on("SELECT v FROM stamps ORDER BY v", (await branch({ name, parent_timestamp })).endpoint)).map(
        (r) => r.v,
      );
    expect(await rowsAt("at-the-commit", stamp.at)).toEqual([1, 2]);
    expect(await rowsAt("just-before-it", stamp.before)).toEqual([1]);
    expect((await api("DELETE", `/projects/${p}`)).status).toBe(200);
  }, 60_000);

  it("parent_lsn inside a commit's WAL record: the branch holds the records that end by it, not that commit", async () => {
    const { p, endpoint, owner, on, branch } = await freshProject("mid-record");
    const client = clientOf(endpoint, owner.name, owner.password, "neondb");
    await client.connect();
    let bounds: { before: string; after: string };
    try {
      await client.query("CREATE TABLE marks (v int)");
      await client.query("INSERT INTO marks VALUES (1)");
      await client.query("BEGIN");
      await client.query("INSERT INTO marks VALUES (2)");
      // Where the commit's record will begin, and where it ended (one client writes).
      const before = (await client.query("SELECT pg_current_wal_insert_lsn()::text AS lsn")).rows[0].lsn;
      await client.query("COMMIT");
      const after = (await client.query("SELECT pg_current_wal_insert_lsn()::text AS lsn")).rows[0].lsn;
      bounds = { before, after };
    } finally {
      await client.end();
    }
    const inside = (lsn: string, by: number) => {
      const [hi, lo] = lsn.split("/").map((part) => BigInt(`0x${part}`)) as [bigint, bigint];
      const at = (hi << 32n) + lo + BigInt(by);
      return `${(at >> 32n).toString(16).toUpperCase()}/${(at & 0xffffffffn).toString(16).toUpperCase()}`;
    };
    const rowsAt = async (name: string, parent_lsn: string) =>
      (await on("SELECT v FROM marks ORDER BY v", (await branch({ name, parent_lsn })).endpoint)).map(
        (r) => r.v,
      );
    expect(await rowsAt("inside-the-commit", inside(bounds.before, 8))).toEqual([1]);
    expect(await rowsAt("after-the-commit", bounds.after)).toEqual([1, 2]);
    expect((await api("DELETE", `/projects/${p}`)).status).toBe(200);
  }, 60_000);

  it("a branch of a running parent's head written to meanwhile shows as parent_timestamp when its data was the parent's: a branch at that time holds the same rows", async () => {
    const { p, endpoint, owner, on, branch } = await freshProject("head-time");
    await on("CREATE TABLE ticks (v serial)");
    // A writer committing a row every few milliseconds while the branch is made.
    const writer = clientOf(endpoint, owner.name, owner.password, "neondb");
    await writer.connect();
    let writing = true;
    const wrote = (async () => {
      while (writing) {
        await writer.query("INSERT INTO ticks DEFAULT VALUES");
        await new Promise((r) => setTimeout(r, 3));
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const rowsOf = async (fields: Record<string, unknown>) => {
      const made = await branch(fields);
      const [{ n }] = await on("SELECT count(*)::int AS n FROM ticks", made.endpoint);
      return { id: made.id, n };
    };
    const head = await rowsOf({ name: "head" });
    writing = false;
    await wrote;
    await writer.end();
    const { parent_timestamp } = (await api("GET", `/projects/${p}/branches/${head.id}`)).body.branch;
    expect((await rowsOf({ name: "at-its-time", parent_timestamp })).n).toBe(head.n);
    // A branch no compute has run on yet holds the point it was made at: a branch of it there is made.
    const idle = await api("POST", `/projects/${p}/branches`, { branch: { name: "idle" } });
    expect(idle.status).toBe(201);
    await allSettled(p, idle.body.operations);
    const { parent_lsn } = (await api("GET", `/projects/${p}/branches/${idle.body.branch.id}`)).body.branch;
    const [{ n: all }] = await on("SELECT count(*)::int AS n FROM ticks");
    expect((await rowsOf({ name: "of-idle", parent_id: idle.body.branch.id, parent_lsn })).n).toBe(all);
    expect((await api("DELETE", `/projects/${p}`)).status).toBe(200);
  }, 60_000);
});

describe("files on disk", () => {
  it("are their owner's alone: the database and every data folder and file (folders above a branch only passable, 0711)", () => {
    const offending: string[] = [];
    const check = (p: string, others: number) => {
      const mode = fs.statSync(p).mode & 0o777;
      if (mode & others) offending.push(`${p}: ${mode.toString(8)}`);
    };
    for (const f of fs.readdirSync(dir).filter((n) => n.startsWith("db.sqlite")))
      check(path.join(dir, f), 0o066);
    const data = path.join(dir, "db-data");
    check(data, 0o066);
    const engines = path.join(data, "engines");
    for (const entry of fs.readdirSync(data, { recursive: true, withFileTypes: true })) {
      const p = path.join(entry.parentPath, entry.name);
      if (entry.isSymbolicLink() || !fs.existsSync(p)) continue;
      // The installation servers run from holds the package's programs and shared files (hard links
      // of node_modules' own, readable as those are) and no data: nobody else may change it.
      if (p.startsWith(`${engines}${path.sep}`)) check(p, 0o022);
      else check(p, 0o066);
    }
    expect(offending).toEqual([]);
    for (const engine of fs.readdirSync(engines)) {
      expect(fs.readdirSync(path.join(engines, engine)).sort()).toEqual(["bin", "lib", "share"]);
    }
    expect(fs.statSync(path.join(dir, "db.sqlite")).mode & 0o777).toBe(0o600);
  });

  // Where the file system takes the mark (ext4: Linux CI and most Linux machines).
  it.runIf(takesTopMark())(
    "the folders copies are made in are marked as tops of hierarchies (chattr +T), so each copy gets a block group of its own",
    () => {
      const projects = path.join(dir, "db-data", "projects");
      const folders = [projects, path.join(projects, projectId), path.join(projects, projectId, "branches")];
      if (fs.existsSync(path.join(projects, projectId, "snapshots")))
        folders.push(path.join(projects, projectId, "snapshots"));
      for (const folder of folders) expect(fileFlags(folder), folder).toContain("T");
      // The copies themselves are not marked: their own folders stay beside them.
      expect(fileFlags(path.join(projects, projectId, "branches", mainId))).not.toContain("T");
      expect(fileFlags(path.join(dir, "db-data"))).not.toContain("T");
    },
  );
});
