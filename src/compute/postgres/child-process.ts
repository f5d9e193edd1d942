import type childProcess from "node:child_process";
import { promisify } from "node:util";
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

/** execFile as a promise of its output. */
export function run(
  file: string,
  args: string[],
  options: childProcess.ExecFileOptions = {},
): Promise<{ stdout: string; stderr: string }> {
  return promisify(childProcesses().execFile)(file, args, { ...options, encoding: "utf8" }) as Promise<{
    stdout: string;
    stderr: string;
  }>;
}
