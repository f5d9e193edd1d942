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
 * immediate one, then SIGKILL.
 */
export async function endOrphan(pidFile: string, logger?: Logger): Promise<void> {
  let lines: string[];
  try {
    lines = fs.readFileSync(pidFile, "utf8").split("\n");
  } catch {
    return;
  }
  const pid = Number(lines[0]);
  const dataDir = path.dirname(pidFile);
  if (!Number.isInteger(pid) || pid <= 0 || !(await isPostgres(pid))) {
    await endStrays(dataDir, logger);
    return;
  }
  if (!(await isServerOf(pid, dataDir, Number(lines[2])))) {
    // Not this folder's: its own start says the file is in the way, if that process still runs.
    logger?.warn(
      { serverPid: pid, dataDir },
      "a stale postmaster.pid names another Postgres server: left alone",
    );
    return;
  }
  logger?.warn({ serverPid: pid, dataDir }, "ending a Postgres server a previous run left behind");
  process.kill(pid, "SIGINT");
  if (await ended(pid, 10_000)) return;
  process.kill(pid, "SIGQUIT");
  if (await ended(pid, 5_000)) return;
  process.kill(pid, "SIGKILL");
  await ended(pid, 5_000);
  await endStrays(dataDir, logger);
}

/**
 * Ends what is left of a server whose postmaster is gone (killed by hand or by the system's OOM
 * killer): a backend busy with a query runs on (one waiting on its client notices and exits),
 * attached to the server's shared memory, and no server starts on the folder until it ends
 * ("pre-existing shared memory block is still in use"). Found by their working folder, which
 * Linux alone shows (/proc); elsewhere Postgres' refusal stands until they end. Nothing is ended
 * while the folder's postmaster.pid names its running server.
 */
export async function endStrays(dataDir: string, logger?: Logger): Promise<void> {
  if (process.platform !== "linux") return;
  let postmaster: number;
  let folder: string;
  try {
    postmaster = Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    folder = fs.realpathSync(dataDir);
  } catch {
    return; // stopped cleanly (no postmaster.pid), or gone
  }
  if (linuxPostgres(postmaster) && workingFolder(postmaster) === folder) return;
  const strays = fs
    .readdirSync("/proc")
    .map(Number)
    .filter((pid) => pid > 0 && pid !== process.pid && linuxPostgres(pid) && workingFolder(pid) === folder);
  if (!strays.length) return;
  logger?.warn({ pids: strays, dataDir }, "ending the processes of a Postgres server that is gone");
  await Promise.all(
    strays.map(async (pid) => {
      for (const signal of ["SIGQUIT", "SIGKILL"] as const) {
        try {
          process.kill(pid, signal);
        } catch {
          return; // ended meanwhile
        }
        if (await ended(pid, 2_000)) return;
      }
    }),
  );
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
