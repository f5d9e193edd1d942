import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type { PgBinaries } from "./binaries.js";
import { childProcesses, run, unixTools } from "./child-process.js";

/**
 * Postgres refuses to run as root. When the emulator is root (CI is), servers and initdb run as
 * this unprivileged user, and their folders are handed to it.
 */
export const UNPRIVILEGED = { uid: 65534, gid: 65534 };

export function runsAsRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/**
 * When the emulator is root: the first folder on the way to `dir` that the unprivileged user
 * cannot pass through (a home folder of mode 0700), if any. Its servers could not reach their data.
 */
export function closedToServers(dir: string): string | undefined {
  if (!runsAsRoot()) return undefined;
  const chain: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    chain.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const folder of chain) {
    let st: fs.Stats;
    try {
      st = fs.statSync(folder);
    } catch {
      return undefined; // made later, passable (0711)
    }
    const bit = st.uid === UNPRIVILEGED.uid ? 0o100 : st.gid === UNPRIVILEGED.gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) return folder;
  }
  return undefined;
}

/** What to do about a folder closedToServers found. */
export function closedFolderMessage(folder: string, dataDir: string): string {
  return `Postgres runs as uid ${UNPRIVILEGED.uid} when the emulator runs as root, and cannot pass through ${folder} to reach the data folder ${dataDir}: put it elsewhere (NEON_EMULATOR_DB or NEON_EMULATOR_DATA_DIR, e.g. under /srv or /tmp) or let others through (chmod o+x ${folder})`;
}

/**
 * The environment Postgres' programs run with: the emulator's, in the C locale (messages the
 * emulator reads), without its own settings — the API key among them, which a process of the
 * servers' user could otherwise read from /proc.
 */
export function serverEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { LC_ALL: "C" };
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith("NEON_EMULATOR_") && name !== "LC_ALL") env[name] = value;
  return env;
}

/** The user a Postgres process runs as: the unprivileged one when the emulator is root, else the emulator's own. */
export function serverIdentity(): { uid: number; gid: number } | Record<string, never> {
  return runsAsRoot() ? UNPRIVILEGED : {};
}

/** Hands one file to the user servers run as (no process spawned); nothing to do unless the emulator is root. */
export function handOverFile(file: string): void {
  if (runsAsRoot()) fs.chownSync(file, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
}

/** Hands a folder (recursively) to the user servers run as; nothing to do unless the emulator is root. */
export async function handOver(dir: string): Promise<void> {
  if (runsAsRoot()) await run("chown", ["-R", `${UNPRIVILEGED.uid}:${UNPRIVILEGED.gid}`, dir]);
}

/** A free TCP port on the loopback interface (the kernel's choice). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Runs initdb for a new cluster owned by `superuser`, whose password is read from `pwfile`. */
export async function initdb(
  bin: PgBinaries,
  dataDir: string,
  superuser: string,
  pwfile: string,
): Promise<void> {
  await run(
    bin.initdb,
    [
      "-D",
      dataDir,
      "-U",
      superuser,
      `--pwfile=${pwfile}`,
      "--auth-local=scram-sha-256",
      "--auth-host=scram-sha-256",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
    ],
    { ...serverIdentity(), env: serverEnvironment() },
  );
}

/** A primary says "ready to accept connections"; a hot standby "ready to accept read-only connections". */
const READY = /database system is ready to accept (read-only )?connections/;
/** stderr lines kept to explain a server that did not start (never statements: see settings). */
const KEPT_LINES = 20;

/** The servers the emulator runs, until each exits. */
const live = new Set<PgServer>();
/** Set by stopAllNow: no server starts after it. */
let closing = false;

/** The process ids of the servers the emulator runs. */
export function serverPids(): Set<number> {
  const pids = new Set<number>();
  for (const server of live) if (server.proc.pid !== undefined) pids.add(server.proc.pid);
  return pids;
}

/** The Postgres major of the emulator's server on `port`, if one runs there. */
export function majorOnPort(port: number): number | undefined {
  for (const server of live) if (server.port === port) return server.major;
  return undefined;
}

/**
 * Every server the emulator runs shuts down at once (immediate shutdown, then SIGKILL after
 * `graceMs`), and none starts from then on (work under way may be about to start one).
 */
export async function stopAllNow(graceMs = 5_000): Promise<void> {
  closing = true;
  while (live.size) await Promise.all([...live].map((server) => server.stop(0, graceMs)));
}

/** One running Postgres server. */
export class PgServer {
  private readonly lines: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(
    readonly proc: ChildProcess,
    readonly port: number,
    private readonly bin: PgBinaries,
    private readonly dataDir: string,
  ) {
    live.add(this);
    // A process that could not be spawned emits no exit.
    proc.once("error", () => live.delete(this));
    this.exited = new Promise((resolve) =>
      proc.once("exit", (code) => {
        live.delete(this);
        resolve(code);
      }),
    );
  }

  get major(): number {
    return this.bin.major;
  }

  /** Spawns `postgres` on `dataDir`, its log lines kept and passed to `onLine`. */
  private static spawn(
    bin: PgBinaries,
    dataDir: string,
    port: number,
    settings: Record<string, string>,
    onLine: (line: string) => void,
  ): PgServer {
    if (closing) throw new Error("the emulator is stopping: no server starts");
    const args = ["-D", dataDir, "-p", String(port)];
    for (const [name, value] of Object.entries(settings)) args.push("-c", `${name}=${value}`);
    const proc = childProcesses().spawn(bin.postgres, args, {
      ...serverIdentity(),
      // Its own process group: a terminal's Ctrl-C reaches the emulator alone, which reads what
      // SQL changed in each compute's roles and databases before it stops the server itself.
      detached: process.platform !== "win32",
      stdio: ["ignore", "ignore", "pipe"],
      env: serverEnvironment(),
    });
    const server = new PgServer(proc, port, bin, dataDir);
    let buffered = "";
    proc.stderr?.setEncoding("utf8");
    proc.stderr?.on("data", (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split("\n");
      buffered = parts.pop() ?? "";
      for (const line of parts) {
        server.keep(line);
        onLine(line);
      }
    });
    return server;
  }

  /**
   * Starts `postgres` on `dataDir`, listening on 127.0.0.1:`port`, with `settings` as -c options,
   * and resolves once it accepts connections (or rejects with its last log lines). `spawned`
   * receives it at once (to stop it before it is ready).
   */
  static async start(
    bin: PgBinaries,
    dataDir: string,
    port: number,
    settings: Record<string, string>,
    timeoutMs = 30_000,
    spawned?: (server: PgServer) => void,
  ): Promise<PgServer> {
    let ready = () => {};
    const server = PgServer.spawn(bin, dataDir, port, settings, (line) => {
      if (READY.test(line)) ready();
    });
    spawned?.(server);
    const { proc } = server;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        proc.kill("SIGKILL");
        reject(new Error(`postgres did not start within ${timeoutMs} ms: ${server.log()}`));
      }, timeoutMs);
      ready = () => {
        clearTimeout(timer);
        resolve();
      };
      proc.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`postgres exited with ${code} while starting: ${server.log()}`));
      });
    });
    return server;
  }

  /**
   * Runs `postgres` on `dataDir` until it exits by itself (a recovery told to shut down at its
   * target); `spawned` receives it at once (to stop it early). After `timeoutMs` it is killed.
   * Resolves to its exit code and last log lines.
   */
  static async runToExit(
    bin: PgBinaries,
    dataDir: string,
    port: number,
    settings: Record<string, string>,
    timeoutMs: number,
    spawned: (server: PgServer) => void,
  ): Promise<{ code: number | null; log: string }> {
    const server = PgServer.spawn(bin, dataDir, port, settings, () => {});
    spawned(server);
    const timer = setTimeout(() => server.proc.kill("SIGKILL"), timeoutMs);
    const failed = new Promise<never>((_, reject) => server.proc.once("error", reject));
    try {
      const code = await Promise.race([server.exited, failed]);
      return { code, log: server.log() };
    } finally {
      clearTimeout(timer);
    }
  }

  private keep(line: string): void {
    this.lines.push(line);
    if (this.lines.length > KEPT_LINES) this.lines.shift();
  }

  /** The server's last log lines. */
  log(): string {
    return this.lines.join("\n");
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** It exited with status 0 (a shutdown), not killed or failed: it left no process behind. */
  get exitedCleanly(): boolean {
    return this.proc.exitCode === 0;
  }

  /**
   * Fast shutdown (SIGINT): every client connection ends with 57P01 "terminating connection due to
   * administrator command", then the server checkpoints and exits. Immediate shutdown after
   * `graceMs` (at once for 0), and SIGKILL `killMs` after that, if given.
   */
  async stop(graceMs = 10_000, killMs?: number): Promise<void> {
    if (!this.running) return;
    if (graceMs > 0) this.shutDown("fast");
    const timers = [setTimeout(() => this.shutDown("immediate"), graceMs)];
    if (killMs !== undefined) timers.push(setTimeout(() => this.proc.kill("SIGKILL"), graceMs + killMs));
    await this.exited;
    for (const timer of timers) clearTimeout(timer);
  }

  /**
   * Has the server read its configuration files again, as pg_reload_conf() does, without a
   * session (a setting such as a very short transaction_timeout may end every login): SIGHUP, or,
   * without signals (Windows), pg_ctl's reload.
   */
  async reload(): Promise<void> {
    if (unixTools.use) {
      this.proc.kill("SIGHUP");
      return;
    }
    await run(this.bin.pgCtl, ["reload", "-D", this.dataDir], {
      ...serverIdentity(),
      env: serverEnvironment(),
    });
  }

  /**
   * Asks the server for a shutdown: its signal (fast: SIGINT, immediate: SIGQUIT), or, without
   * signals (Windows, where node's kill ends a process outright), pg_ctl's stop in that mode.
   */
  private shutDown(mode: "fast" | "immediate"): void {
    if (unixTools.use) {
      this.proc.kill(mode === "fast" ? "SIGINT" : "SIGQUIT");
      return;
    }
    run(this.bin.pgCtl, ["stop", "-D", this.dataDir, "-m", mode, "-W"], {
      ...serverIdentity(),
      env: serverEnvironment(),
    }).catch(() => this.proc.kill("SIGKILL")); // e.g. not started far enough to have written its pid file
  }
}
