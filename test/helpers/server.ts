import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { startArgs } from "./start-command.js";

export interface RunningServer {
  url: string;
  port: number;
  /** The Postgres front door's port (NEON_EMULATOR_COMPUTE=postgres), else undefined. */
  pgPort: number | undefined;
  proc: ChildProcess;
  /** Everything the server printed on stdout so far (JSON log lines, printed keys). */
  stdout(): string;
  /** Everything the server printed on stderr so far. */
  stderr(): string;
  /** Sends the signal (SIGTERM unless given) and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const tempDirs: string[] = [];
process.once("exit", () => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder, removed when the test process exits (and with the run's folder; see global-setup.ts). */
export function tempDir(prefix = "neon-emulator-"): string {
  const dir = fs.mkdtempSync(path.join(process.env.NEON_EMULATOR_TEST_TMP ?? os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Whether a process of this id exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A key of the 64-character [a-z0-9] form the server accepts in NEON_EMULATOR_API_KEY. */
export function randomKey(): string {
  const chars = "abcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (const b of crypto.getRandomValues(new Uint8Array(64))) out += chars[b % 36];
  return out;
}

/**
 * Starts the compiled server as a child process on a free port (PORT=0) and resolves once it
 * logs that it listens; stdout and stderr are kept whole (the secrets scan reads both).
 * Environment defaults: no seed, info logging, loopback. `command` is node with npm start's
 * arguments unless given (a shell running the start script, a moved build). A server that does
 * not come up in `timeoutMs` is killed, never left behind.
 */
export function startServer(
  env: Record<string, string>,
  options: {
    command?: { file: string; args: string[]; cwd?: string };
    timeoutMs?: number;
    /** In a process group of its own, as a terminal's foreground job is (signal it with `process.kill(-pid, …)`). */
    detached?: boolean;
  } = {},
): Promise<RunningServer> {
  const command = options.command ?? { file: process.execPath, args: startArgs() };
  const timeoutMs = options.timeoutMs ?? 30_000;
  const proc = spawn(command.file, command.args, {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      NEON_EMULATOR_SEED: "none",
      NEON_EMULATOR_LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false,
    ...(command.cwd ? { cwd: command.cwd } : {}),
  });
  let out = "";
  let err = "";
  proc.stdout?.setEncoding("utf8");
  proc.stderr?.setEncoding("utf8");
  proc.stderr?.on("data", (d: string) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}\n${err}`));
    };
    proc.once("exit", onExit);
    let listening = false;
    proc.stdout?.on("data", (d: string) => {
      out += d;
      if (listening) return;
      const line = out.split("\n").find((l) => l.includes("neon-emulator listening"));
      if (!line) return;
      listening = true;
      clearTimeout(timer);
      proc.off("exit", onExit);
      const listened = JSON.parse(line) as { url: string; postgres?: string };
      const url = listened.url.replace(/\/api\/v2$/, "");
      resolve({
        url,
        port: Number(new URL(url).port),
        pgPort: listened.postgres ? Number(listened.postgres.split(":").pop()) : undefined,
        proc,
        stdout: () => out,
        stderr: () => err,
        stop: async (signal = "SIGTERM") => {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
          return exited;
        },
      });
    });
  });
}

export interface JsonResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field in tests
  body: any;
}

/** A JSON request to a running server with a Bearer key. */
export async function http(
  baseUrl: string,
  key: string,
  method: string,
  p: string,
  body?: unknown,
): Promise<JsonResponse> {
  const res = await fetch(`${baseUrl}${p}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
