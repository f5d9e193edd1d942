import type childProcess from "node:child_process";
import { requireFromPackage } from "../../platform/package-root.js";

let loaded: typeof childProcess | undefined;

/**
 * Whether computes are run with the system's Unix tools: `cp -a` copies folders, the shell's gzip
 * and mv archive WAL, signals stop servers. Not on Windows, where node copies folders, a node
 * script (dist/cli/wal-command.cjs) archives and restores WAL, and pg_ctl stops servers. Tests
 * turn it off to run those on any system.
 */
export const unixTools = { use: process.platform !== "win32" };

/**
 * node:child_process, loaded at run time: a start-up snapshot must not hold it (the builder warns
 * that it is not verified in snapshots; see main.ts and test/server/snapshot.test.ts).
 */
export function childProcesses(): typeof childProcess {
  loaded ??= requireFromPackage()("node:child_process") as typeof childProcess;
  return loaded;
}

/** What run() takes of execFile's options. */
export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** Ends the program and its group (SIGTERM) after this many ms; it then fails as one a signal ended. */
  timeout?: number;
}

/** Programs run() started that have not ended (endRunning ends them). */
const running = new Set<childProcess.ChildProcess>();

/** Sends `signal` to a program run() started, and to its group (what it started in turn). */
function signal(child: childProcess.ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (process.platform !== "win32" && child.pid !== undefined) process.kill(-child.pid, sig);
    else child.kill(sig);
  } catch {
    // Ended meanwhile.
  }
}

/**
 * A program's run, as execFile's promise: its output, or an error as execFile's (`Command failed:
 * <command>` and its stderr; `code` the exit code, `signal`, `stdout`, `stderr`). The program runs in
 * a process group of its own (not on Windows; execFile cannot do that), as the servers do: a
 * terminal's Ctrl-C (SIGINT to the emulator's group) goes to the emulator alone, whose shutdown lets
 * the copy or check under way end, rather than killing it mid-way and failing the operation it
 * served; a shutdown at once ends it (endRunning).
 */
export function run(
  file: string,
  args: string[],
  options: RunOptions = {},
): Promise<{ stdout: string; stderr: string }> {
  const { timeout, ...spawnOptions } = options;
  return new Promise((resolve, reject) => {
    const child = childProcesses().spawn(file, args, {
      ...spawnOptions,
      detached: process.platform !== "win32",
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = timeout ? setTimeout(() => signal(child, "SIGTERM"), timeout) : undefined;
    child.on("error", (err) => {
      clearTimeout(timer);
      running.delete(child);
      reject(Object.assign(err, { stdout, stderr }));
    });
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      running.delete(child);
      if (code === 0) return resolve({ stdout, stderr });
      const command = [file, ...args].join(" ");
      reject(
        Object.assign(new Error(`Command failed: ${command}\n${stderr}`), {
          code,
          signal: sig,
          stdout,
          stderr,
        }),
      );
    });
  });
}

/** Ends every program run() started that is still running, and what each started (a shutdown at once). */
export function endRunning(): void {
  for (const child of running) signal(child, "SIGKILL");
}
