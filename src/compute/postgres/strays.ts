import fs from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import { run } from "./child-process.js";

/** How often whether a server process has ended is looked at. */
const POLL_MS = 50;

/** Whether `pid` is a live process running the postgres binary. */
async function isPostgres(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // An exited but unreaped server (a zombie) has ended.
    if (process.platform === "linux") return linuxPostgres(pid);
    const { stdout } = await run("ps", ["-p", String(pid), "-o", "stat=,comm="]);
    const [state = "", ...command] = stdout.trim().split(/\s+/);
    return !state.startsWith("Z") && command.join(" ").endsWith("postgres");
  } catch {
    return false;
  }
}

/**
 * Whether `pid`, a live postgres (isPostgres), is the server of the folder `dataDir` (a
 * postmaster.pid outlives a reboot, and its pid may then be another server's): on Linux, the
 * process works in that folder; elsewhere, it started when the file says (its third line, in seconds).
 */
async function isServerOf(pid: number, dataDir: string, startedAt: number): Promise<boolean> {
  try {
    if (process.platform === "linux") return workingFolder(pid) === fs.realpathSync(dataDir);
    const { stdout } = await run("ps", ["-p", String(pid), "-o", "lstart="]);
    return Math.abs(Date.parse(stdout.trim()) / 1000 - startedAt) <= 2;
  } catch {
    return false;
  }
}

/** Waits up to `ms` for a server process to end; true if it did. */
async function ended(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += POLL_MS) {
    if (!(await isPostgres(pid))) return true;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return !(await isPostgres(pid));
}

/**
 * Ends the server a postmaster.pid names, if it still runs: a fast shutdown, as a stop does (its
 * checkpoint spares the next start a crash recovery, and its statistics are kept), then an
 * immediate one, then SIGKILL. `beforeEnd` is given its port first (line 4 of the file), once
 * the process is known to be that folder's server.
 */
export async function endOrphan(
  pidFile: string,
  logger?: Logger,
  beforeEnd?: (port: number) => Promise<void>,
): Promise<void> {
  let lines: string[];
  try {
    lines = fs.readFileSync(pidFile, "utf8").split("\n");
  } catch {
    return;
  }
  const pid = Number(lines[0]);
  const dataDir = path.dirname(pidFile);
  if (!Number.isInteger(pid) || pid <= 0 || !(await isPostgres(pid))) return;
  if (!(await isServerOf(pid, dataDir, Number(lines[2])))) {
    // Not this folder's: its own start says the file is in the way, if that process still runs.
    logger?.warn(
      { serverPid: pid, dataDir },
      "a stale postmaster.pid names another Postgres server: left alone",
    );
    return;
  }
  await beforeEnd?.(Number(lines[3]));
  logger?.warn({ serverPid: pid, dataDir }, "ending a Postgres server a previous run left behind");
  await signalUntilEnded(pid, [
    ["SIGINT", 10_000],
    ["SIGQUIT", 5_000],
    ["SIGKILL", 5_000],
  ]);
}

/** Sends each signal in turn until the process has ended, waiting up to its time after each. */
async function signalUntilEnded(pid: number, steps: [NodeJS.Signals, number][]): Promise<void> {
  for (const [signal, ms] of steps) {
    try {
      process.kill(pid, signal);
    } catch {
      return; // ended meanwhile
    }
    if (await ended(pid, ms)) return;
  }
}

/**
 * Ends what is left of servers whose postmaster is gone (killed by hand or by the system's OOM
 * killer): a backend busy with a query runs on (one waiting on its client notices and exits),
 * attached to its server's shared memory, and no server starts on that folder until it ends
 * ("pre-existing shared memory block is still in use"). Strays are the postgres processes working
 * in a folder under `root` (or one removed since) that are neither among `ours` (the servers the
 * emulator runs) nor their children. Found through /proc, which Linux alone has; elsewhere
 * Postgres' refusal stands until they end.
 */
export async function endStrays(root: string, ours: ReadonlySet<number>, logger?: Logger): Promise<void> {
  if (process.platform !== "linux" || !fs.existsSync(root)) return;
  const under = `${fs.realpathSync(root)}${path.sep}`;
  const strays = fs
    .readdirSync("/proc")
    .map(Number)
    .filter((pid) => {
      if (!(pid > 0) || ours.has(pid) || !linuxPostgres(pid)) return false;
      const folder = workingFolder(pid)?.replace(/ \(deleted\)$/, "");
      const parent = parentOf(pid);
      return folder?.startsWith(under) === true && parent !== undefined && !ours.has(parent);
    });
  if (!strays.length) return;
  logger?.warn({ pids: strays }, "ending the processes of Postgres servers that are gone");
  await Promise.all(
    strays.map((pid) =>
      signalUntilEnded(pid, [
        ["SIGQUIT", 2_000],
        ["SIGKILL", 2_000],
      ]),
    ),
  );
}

/** A process's parent (Linux), if it still runs. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8"); // "<pid> (<comm>) <state> <ppid> …"
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** A process's working folder (Linux), if it may be read. */
function workingFolder(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is a live process running the postgres binary, as Linux's /proc says (no `ps`
 * needed: BusyBox's takes no -o). A server that exited but is not yet reaped (its parent, the
 * previous run, is gone) is a zombie until the system's init process collects it: ended.
 */
function linuxPostgres(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8"); // "<pid> (<comm>) <state> …"
    const close = stat.lastIndexOf(")");
    return stat.slice(stat.indexOf("(") + 1, close) === "postgres" && stat[close + 2] !== "Z";
  } catch {
    return false;
  }
}
