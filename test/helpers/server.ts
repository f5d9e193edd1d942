import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

import { startArgs } from "./start-command.js";

export interface RunningServer {
  url: string;
  port: number;
  proc: ChildProcess;
  stdout: string[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const tempDirs: string[] = [];
process.once("exit", () => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder, removed when the test process exits. */
export function tempDir(prefix = "neon-emulator-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A key a test can configure with NEON_EMULATOR_API_KEY. */
export function randomKey(): string {
  const chars = "abcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (const b of crypto.getRandomValues(new Uint8Array(64))) out += chars[b % 36];
  return out;
}

/**
 * Starts the compiled server as a child process on a free port (PORT=0) and resolves once it
 * logs that it listens. Environment defaults: no seed, info logging. `command` is node with
 * npm start's arguments unless given (a shell running the start script, a moved build).
 */
export function startServer(
  env: Record<string, string>,
  command: { file: string; args: string[]; cwd?: string } = { file: process.execPath, args: startArgs() },
): Promise<RunningServer> {
  const proc = spawn(command.file, command.args, {
    env: { ...process.env, PORT: "0", NEON_EMULATOR_SEED: "none", NEON_EMULATOR_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(command.cwd ? { cwd: command.cwd } : {}),
  });
  const stdout: string[] = [];
  let stderr = "";
  proc.stderr?.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave an orphan behind: a server that did not come up is killed.
      proc.kill("SIGKILL");
      reject(new Error(`server did not start in time:\n${stdout.join("\n")}\n${stderr}`));
    }, 15_000);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stdout.join("\n")}\n${stderr}`));
    });
    const lines = readline.createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      stdout.push(line);
      if (!line.includes("neon-emulator listening")) return;
      const url = (JSON.parse(line) as { url: string }).url.replace(/\/api\/v2$/, "");
      const port = Number(new URL(url).port);
      clearTimeout(timer);
      proc.removeAllListeners("exit");
      resolve({
        url,
        port,
        proc,
        stdout,
        stop: (signal = "SIGTERM") =>
          new Promise((done) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return done(proc.exitCode);
            proc.once("exit", (code) => done(code));
            proc.kill(signal);
          }),
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
