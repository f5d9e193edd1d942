import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ROOT, startArgs } from "../../test/helpers/start-command.js";

export { ROOT };
/**
 * The project folder whose build the bench runs: a private copy of this one (see copyBuild) or
 * another commit's (buildFromRef). Other people rebuild dist/ while a bench runs (the test
 * suite's global setup does), and every scenario of one run must measure the same code.
 */
export let EMULATOR_ROOT = ROOT;

/**
 * Copies the build (dist/: bundle and start-up snapshot) and package.json, whose start script says
 * how to run it, to a private folder beside symlinks to migrations/ and node_modules/, and runs
 * that from now on. Returns the sha256 (12 hex) of what dist/ holds. The folder is `keepIn` when
 * given (kept, e.g. beside CPU profiles that refer to the bundle's lines), else a temp folder
 * (outside the repository, so no linter or git sees it) removed at exit.
 */
export function copyBuild(keepIn?: string): string {
  const dist = path.join(ROOT, "dist");
  if (!fs.existsSync(dist)) throw new Error("dist/ missing: run `npm run build`");
  let dir = keepIn;
  if (!dir) {
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), "neon-bench-code-"));
    // Postgres computes run as another user when the bench is root: they start the binaries
    // through this folder's node_modules link.
    fs.chmodSync(temp, 0o755);
    process.on("exit", () => fs.rmSync(temp, { recursive: true, force: true }));
    dir = temp;
  }
  fs.cpSync(dist, path.join(dir, "dist"), { recursive: true });
  fs.copyFileSync(path.join(ROOT, "package.json"), path.join(dir, "package.json"));
  for (const link of ["migrations", "node_modules"])
    if (!fs.existsSync(path.join(dir, link)))
      fs.symlinkSync(path.join(ROOT, link), path.join(dir, link), "dir");
  EMULATOR_ROOT = dir;
  return buildHash(dir);
}

/** sha256 (12 hex) of the files of a build's dist/. */
export function buildHash(root: string): string {
  const hash = crypto.createHash("sha256");
  const dist = path.join(root, "dist");
  for (const file of fs.readdirSync(dist, { recursive: true, encoding: "utf8" }).sort()) {
    const full = path.join(dist, file);
    if (fs.statSync(full).isFile()) hash.update(file).update(fs.readFileSync(full));
  }
  return hash.digest("hex").slice(0, 12);
}

export const BASELINE_MAIN = path.join(ROOT, "bench/baseline.mjs");

export interface Child {
  proc: ChildProcess;
  pid: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Milliseconds from spawn() to the first 200 of GET /_emulator/health. */
  startMs: number;
  output(): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** node's arguments: flags, then the script. */
  args: string[];
  env?: Record<string, string>;
}

/** A 64-character [a-z0-9] key for NEON_EMULATOR_API_KEY. */
export function randomKey(): string {
  const chars = "abcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (const b of crypto.randomBytes(64)) out += chars[b % 36];
  return out;
}

export function tempDir(prefix = "neon-bench-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * A port that was free a moment ago. The emulator logs its URL only at level info, and the
 * bench runs it at warn, so the port is chosen here rather than read back from PORT=0.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** One GET on a fresh connection; resolves with the status, or 0 when the connection fails. */
function probe(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    req.on("timeout", () => req.destroy());
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Spawns `node <script>` and waits for the first 200 of its health route. */
export async function spawnServer(opts: SpawnOptions): Promise<Child> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let out = "";
  const t0 = performance.now();
  const script = path.basename(opts.args.at(-1) ?? "node");
  const proc = spawn(process.execPath, opts.args, {
    env: { ...process.env, ...opts.env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
    cwd: ROOT,
  });
  proc.stdout?.on("data", (d) => {
    out += d;
  });
  proc.stderr?.on("data", (d) => {
    out += d;
  });
  let exited = false;
  proc.on("exit", () => {
    exited = true;
  });
  const health = `${url}/_emulator/health`;
  for (;;) {
    if (exited) throw new Error(`${script} exited during start:\n${out}`);
    if ((await probe(health)) === 200) break;
    if (performance.now() - t0 > 30_000) {
      proc.kill("SIGKILL");
      throw new Error(`${script} did not answer health within 30 s:\n${out}`);
    }
    await sleep(2);
  }
  const startMs = performance.now() - t0;
  return {
    proc,
    pid: proc.pid as number,
    url,
    startMs,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        const killer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
        proc.once("exit", () => {
          clearTimeout(killer);
          resolve();
        });
        proc.kill("SIGTERM");
      }),
  };
}

export interface EmulatorOptions {
  db: string;
  key: string;
  clock?: "real" | "manual";
  nodeArgs?: string[];
  env?: Record<string, string>;
  /**
   * Run the bundle without its start-up snapshot (`--snapshot-blob` dropped): node then runs
   * preloads (`--import`), which it skips when it starts from a snapshot.
   */
  withoutSnapshot?: boolean;
}

/** The emulator as `npm start` runs it (its start script's node flags and files), plus `nodeArgs`. */
export function spawnEmulator(o: EmulatorOptions): Promise<Child> {
  let args = startArgs(EMULATOR_ROOT);
  const blob = args.indexOf("--snapshot-blob");
  if (o.withoutSnapshot && blob >= 0) args = [...args.slice(0, blob), ...args.slice(blob + 2)];
  return spawnServer({
    args: [...args.slice(0, -1), ...(o.nodeArgs ?? []), ...args.slice(-1)],
    env: {
      NEON_EMULATOR_DB: o.db,
      NEON_EMULATOR_SEED: "none",
      NEON_EMULATOR_API_KEY: o.key,
      NEON_EMULATOR_LOG_LEVEL: "warn",
      NEON_EMULATOR_CLOCK: o.clock ?? "real",
      // The control-plane figures are measured without Postgres processes (compute.ts measures those).
      NEON_EMULATOR_COMPUTE: "none",
      // The load runs create far more computes in one project than a plan allows (500): the
      // figures measure request handling, not the plan's limits.
      NEON_EMULATOR_LIMITS: "projects=1000000,branches=1000000,computes=1000000",
      ...o.env,
    },
  });
}

/** Bare Hono; with `plain`, a node:http server without Hono (the start-up floor). */
export function spawnBaseline(nodeArgs?: string[], plain = false): Promise<Child> {
  return spawnServer({
    args: [...(nodeArgs ?? []), BASELINE_MAIN],
    env: plain ? { BASELINE_PLAIN: "1" } : {},
  });
}

/**
 * The data plane's floors (bench/baseline.mjs, BASELINE_FLOORS): `/sql` answered with `sqlBody`
 * and no Postgres, and a bare relay to the compute at `relayTo`, whose port it resolves with.
 */
export async function spawnFloors(
  sqlBody: string,
  relayTo: number,
): Promise<{ child: Child; relayPort: number }> {
  const child = await spawnServer({
    args: [BASELINE_MAIN],
    env: { BASELINE_FLOORS: "1", BASELINE_SQL_BODY: sqlBody, BASELINE_RELAY_TO: String(relayTo) },
  });
  const listened = await logLine<{ port: number }>(child, "relay listening");
  return { child, relayPort: listened.port };
}

/**
 * The first line of the child's output holding `msg` (a JSON log line), parsed; waits up to 10 s
 * for it, and stops the child if it never comes.
 */
export async function logLine<T>(child: Child, msg: string): Promise<T> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const line = child
      .output()
      .split("\n")
      .find((l) => l.includes(`"${msg}"`));
    if (line) return JSON.parse(line) as T;
    if (performance.now() > deadline) {
      await child.stop();
      throw new Error(`no "${msg}" line within 10 s:\n${child.output()}`);
    }
    await sleep(5);
  }
}

/**
 * Builds the emulator as of a git ref (a commit, tag or branch) and runs that from now on:
 * `git archive` of the ref into a temp folder, node_modules linked in, that commit's own
 * `npm run build`. The repository itself is only read. Returns the commit's short hash.
 */
export function buildFromRef(ref: string): string {
  const commit = execFileSync("git", ["rev-parse", "--short", `${ref}^{commit}`], {
    cwd: ROOT,
    encoding: "utf8",
  }).trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `neon-bench-${commit}-`));
  fs.chmodSync(dir, 0o755); // see copyBuild
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  const tar = execFileSync("git", ["archive", "--format=tar", commit], { cwd: ROOT, maxBuffer: 1 << 30 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  execFileSync("npm", ["run", "--silent", "build"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  EMULATOR_ROOT = dir;
  return commit;
}

/** Resident set size of a process in MB, from /proc/<pid>/status (VmRSS). */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/** CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** Busy CPU time of the whole machine so far (all cores, ms), from /proc/stat. */
export function machineBusyMs(): number {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0] as string;
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return (
    (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) / 100
  );
}

/**
 * Waits (at most `maxSeconds`) for a second in which other processes use less than
 * `threshold` cores, so a measurement does not start in the middle of someone's build.
 * Returns the other load of the last second sampled.
 */
export async function waitQuiet(maxSeconds: number, threshold = 0.3): Promise<number> {
  const deadline = performance.now() + maxSeconds * 1000;
  let other = 0;
  do {
    const busy0 = machineBusyMs();
    const self0 = process.cpuUsage();
    await sleep(1000);
    const self = process.cpuUsage(self0);
    other = Math.max(0, (machineBusyMs() - busy0 - (self.user + self.system) / 1000) / 1000);
    if (other < threshold) break;
  } while (performance.now() < deadline);
  return other;
}

export { sleep };
