import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { findBinaries, InstalledBinaries, type PgBinaries } from "../../src/compute/postgres/binaries.js";
import { computeClient } from "../helpers/compute.js";
import { type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";

describe("the Postgres majors the emulator can run", () => {
  it("are looked for again when one asked for is missing, so a package installed while it runs is found", () => {
    const installed = [...findBinaries(undefined).keys()];
    expect(installed).toContain(17);
    // As at a start before the package was installed: nothing known yet.
    const majors = new InstalledBinaries(new Map(), undefined);
    expect(majors.has(17)).toBe(true);
    expect(majors.get(17)?.major).toBe(17);
    expect(majors.has(13)).toBe(false);
    expect(majors.installed()).toEqual(installed.sort((a, b) => a - b));
    expect(majors.installCommand(16)).toContain("neon-emulator-pg16");
  });

  it("drop a major whose package npm removed since (a later npm install drops --no-save packages)", () => {
    const gone: PgBinaries = {
      major: 99,
      binDir: "/nonexistent/native/bin",
      initdb: "/nonexistent/native/bin/initdb",
      postgres: "/nonexistent/native/bin/postgres",
      pgCtl: "/nonexistent/native/bin/pg_ctl",
      moduleDir: undefined,
    };
    const majors = new InstalledBinaries(new Map([[99, gone]]), undefined);
    expect(majors.get(99)).toBeUndefined();
    expect(majors.has(99)).toBe(false);
    expect(majors.installed()).not.toContain(99);
    expect(majors.installed()).toContain(17);
  });
});

describe("a major whose binaries go while the emulator runs", { timeout: 120_000 }, () => {
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it("is refused with the install command, by the API and at a client's connect (its DETAIL), and serves again once back, without a restart", async () => {
    // The binaries from a folder of their own (NEON_EMULATOR_PG_BIN), which the test then takes away
    // and puts back, as `npm install` drops a `--no-save` package and the user installs it again.
    const installed = [...findBinaries(undefined).values()].find((b) => b.major === 17) as PgBinaries;
    const top = tempDir();
    fs.chmodSync(top, 0o755);
    const native = path.join(top, "native");
    execFileSync("cp", ["-a", path.dirname(installed.binDir), native]);
    const away = path.join(top, "away");
    const key = randomKey();
    server = await startServer({
      NEON_EMULATOR_DB: path.join(top, "db.sqlite"),
      NEON_EMULATOR_API_KEY: key,
      NEON_EMULATOR_COMPUTE: "postgres",
      NEON_EMULATOR_PG_PORT: "0",
      NEON_EMULATOR_PG_BIN: path.join(native, "bin"),
      NEON_EMULATOR_OPERATION_MS: "start_compute=20,suspend_compute=20,create_timeline=20,apply_config=20",
    });
    const s = server;
    const { api, allSettled } = computeClient(() => s, key);
    const created = await api("POST", "/projects", { project: { pg_version: 17 } });
    expect(created.status).toBe(201);
    await allSettled(created.body.project.id, created.body.operations);
    const uri = created.body.connection_uris[0].connection_uri as string;
    const select = async () => {
      const client = new pg.Client({ connectionString: uri });
      await client.connect();
      try {
        return (await client.query("SELECT 1 AS one")).rows;
      } finally {
        await client.end();
      }
    };
    expect(await select()).toEqual([{ one: 1 }]);
    const endpoint = created.body.endpoints[0].id as string;
    const projectId = created.body.project.id as string;
    const suspend = await api("POST", `/projects/${projectId}/endpoints/${endpoint}/suspend`);
    await allSettled(projectId, suspend.body.operations);

    fs.renameSync(native, away);
    const refused = await api("POST", "/projects", { project: { pg_version: 17 } });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain("npm install --no-save neon-emulator-pg17@npm:");
    const err = await select().then(
      () => undefined,
      (e: Error & { code?: string; detail?: string }) => e,
    );
    expect(err?.message).toBe("Couldn't connect to compute node");
    expect(err?.detail).toMatch(
      /^Postgres 17 is not installed for the emulator; install it with: npm install/,
    );
    // The serverless driver's HTTP path says the same.
    const overHttp = await fetch(`${s.url}/sql`, {
      method: "POST",
      headers: { "Neon-Connection-String": uri, "Content-Type": "application/json" },
      body: JSON.stringify({ query: "SELECT 1", params: [] }),
    });
    expect(overHttp.status).toBe(400);
    const body = (await overHttp.json()) as { message: string; detail: string };
    expect(body.message).toBe("Couldn't connect to compute node");
    expect(body.detail).toMatch(
      /^Postgres 17 is not installed for the emulator; install it with: npm install/,
    );

    fs.renameSync(away, native);
    expect(await select()).toEqual([{ one: 1 }]);
    expect((await api("POST", "/projects", { project: { pg_version: 17 } })).status).toBe(201);
  });
});
