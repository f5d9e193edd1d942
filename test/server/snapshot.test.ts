import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { http, processAlive, type RunningServer, startServer, tempDir } from "../helpers/server.js";
import { ROOT, startArgs, startScript } from "../helpers/start-command.js";

const run = promisify(execFile);
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop("SIGKILL");
});

/** A fresh database with no key configured: the server generates and prints its first key. */
async function freshServer() {
  const s = await startServer({ NEON_EMULATOR_DB: path.join(tempDir(), "db.sqlite") });
  servers.push(s);
  const key = s.stdout().match(/^ {2}([a-z0-9]{64}) {3}/m)?.[1] ?? "";
  expect(key).toMatch(/^[a-z0-9]{64}$/);
  return { s, key };
}

// `npm start` begins from a V8 heap captured when the build ran (see src/main.ts). Everything a
// run must own — randomness, the process id, the host, paths — has to be read after that.
describe("start-up snapshot", () => {
  it("is what npm start runs", () => {
    expect(startArgs()).toContain("--snapshot-blob");
  });

  it("gives every process its own randomness, pid and host", async () => {
    const [a, b] = await Promise.all([freshServer(), freshServer()]);
    expect(a.key).not.toBe(b.key);

    const made = await Promise.all(
      [a, b].map(({ s, key }) => http(s.url, key, "POST", "/api/v2/projects", { project: {} })),
    );
    for (const m of made) expect(m.status).toBe(201);
    const [pa, pb] = made.map((m) => m.body);
    expect(pa.project.id).not.toBe(pb.project.id);
    expect(pa.branch.id).not.toBe(pb.branch.id);
    expect(pa.endpoints[0].id).not.toBe(pb.endpoints[0].id);
    expect(pa.operations[0].id).not.toBe(pb.operations[0].id);

    const requestIds = await Promise.all(
      [a, b].map(async ({ s }) => (await fetch(`${s.url}/_emulator/health`)).headers.get("x-request-id")),
    );
    expect(requestIds[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIds[0]).not.toBe(requestIds[1]);

    for (const { s } of [a, b]) {
      const listening = JSON.parse(
        s
          .stdout()
          .split("\n")
          .find((l) => l.includes("neon-emulator listening")) ?? "{}",
      );
      expect(listening).toMatchObject({ pid: s.proc.pid, hostname: os.hostname() });
    }
  });

  it("finds its files from where it runs, not from where it was built", async () => {
    const moved = tempDir("neon-moved-");
    fs.cpSync(path.join(ROOT, "dist"), path.join(moved, "dist"), { recursive: true });
    fs.copyFileSync(path.join(ROOT, "package.json"), path.join(moved, "package.json"));
    for (const dir of ["migrations", "node_modules"])
      fs.symlinkSync(path.join(ROOT, dir), path.join(moved, dir));
    const s = await startServer(
      { NEON_EMULATOR_DB: path.join(moved, "db.sqlite") },
      { command: { file: process.execPath, args: startArgs(moved), cwd: os.tmpdir() } },
    );
    servers.push(s);
    expect((await fetch(`${s.url}/_emulator/health`)).status).toBe(200);
  });

  it("npm start runs without the snapshot when node flags (NODE_OPTIONS) do not fit it", async () => {
    const s = await startServer(
      { NEON_EMULATOR_DB: path.join(tempDir(), "db.sqlite"), NODE_OPTIONS: "--max-old-space-size=512" },
      { command: { file: "/bin/sh", args: ["-c", startScript()], cwd: ROOT } },
    );
    servers.push(s);
    expect((await fetch(`${s.url}/_emulator/health`)).status).toBe(200);
  });

  it.each([
    ["npm", "npm passes it only to the shell running the script"],
    ["its process group", "the emulator gets it too, and then sees the shell end: one signal, not a second"],
  ])(
    "npm start given a SIGTERM to %s stops the emulator and its computes, not cut short (%s)",
    async (to) => {
      const dir = tempDir();
      fs.chmodSync(dir, 0o755);
      const key = "k".repeat(64);
      const s = await startServer(
        {
          NEON_EMULATOR_DB: path.join(dir, "db.sqlite"),
          NEON_EMULATOR_API_KEY: key,
          NEON_EMULATOR_COMPUTE: "postgres",
          NEON_EMULATOR_PG_PORT: "0",
        },
        { command: { file: "npm", args: ["start"], cwd: ROOT }, detached: true },
      );
      servers.push(s);
      const emulator = Number(
        JSON.parse(
          s
            .stdout()
            .split("\n")
            .find((l) => l.includes("listening")) ?? "{}",
        ).pid,
      );
      expect(emulator).not.toBe(s.proc.pid);
      const created = await http(s.url, key, "POST", "/api/v2/projects", { project: {} });
      expect(created.status).toBe(201);
      const c = new pg.Client({ connectionString: created.body.connection_uris[0].connection_uri });
      c.on("error", () => {});
      await c.connect();
      await c.query("SELECT 1");
      const computes = () =>
        run("pgrep", ["-f", dir]).then(
          ({ stdout }) => stdout.trim().split("\n"),
          () => [],
        );
      expect((await computes()).length).toBeGreaterThan(0);
      if (to === "npm") s.proc.kill("SIGTERM");
      else process.kill(-(s.proc.pid as number), "SIGTERM");
      const alive = () => processAlive(emulator);
      const gone = async () => {
        for (let i = 0; i < 200 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
        return !alive();
      };
      const stopped = await gone();
      // Left behind (the failure this guards against): stopped here, not left to the machine.
      if (!stopped) process.kill(emulator, "SIGTERM");
      expect(stopped || !(await gone())).toBe(true);
      expect(await computes()).toEqual([]);
      expect(s.stdout()).toContain('"msg":"shutting down"');
      expect(s.stdout()).not.toContain("shutting down at once");
    },
  );

  // `npm run build` silences the snapshot builder's generic warnings (see src/main.ts): those it
  // prints name the built-in modules evaluated at import that it has not verified. Only these two
  // are expected; a new one means state that may not survive the snapshot.
  it("holds no built-in module the builder warns about beyond node:module and worker_threads", async () => {
    const blob = path.join(tempDir(), "check.blob");
    const { stderr } = await run(process.execPath, [
      "--max-semi-space-size=1",
      "--snapshot-blob",
      blob,
      "--build-snapshot",
      path.join(ROOT, "dist/main.cjs"),
    ]);
    const warned = [...stderr.matchAll(/built-in module "([^"]+)" works in user snapshot/g)].map((m) => m[1]);
    expect(warned.sort()).toEqual(["node:module", "worker_threads"]);
  });
});
