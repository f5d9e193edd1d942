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
  /** Ends the program (SIGTERM) after this many ms; it then fails as one a signal ended. */
  timeout?: number;
}

/**
 * A program's run, as execFile's promise: its output, or an error as execFile's (`Command failed:
 * <command>` and its stderr; `code` the exit code, `signal`, `stdout`, `stderr`). The program runs in
 * a process group of its own (not on Windows; execFile cannot do that), as the servers do: a
 * terminal's Ctrl-C (SIGINT to the emulator's group) goes to the emulator alone, whose shutdown lets
 * the copy or check under way end, rather than killing it mid-way and failing the operation it served.
 */
export function run(
  file: string,
  args: string[],
  options: RunOptions = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = childProcesses().spawn(file, args, {
      ...options,
      detached: process.platform !== "win32",
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = options.timeout ? setTimeout(() => child.kill("SIGTERM"), options.timeout) : undefined;
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(Object.assign(err, { stdout, stderr }));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve({ stdout, stderr });
      const command = [file, ...args].join(" ");
      reject(
        Object.assign(new Error(`Command failed: ${command}\n${stderr}`), { code, signal, stdout, stderr }),
      );
    });
  });
}
