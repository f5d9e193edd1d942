import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import Database from "better-sqlite3";
import { tempDir as sharedTempDir } from "../../helpers/server.js";
import { startArgs } from "../../helpers/start-command.js";

/**
 * Real-server support for the reliability and security suites: the server spawned as `npm start` runs it
 * whose stdout AND stderr are kept whole (the secrets scan reads both), and an HTTP client on
 * a bounded keep-alive agent that never throws (a reset connection is an outcome to record).
 */

export const SOAK = Boolean(process.env.SOAK);

export interface Proc {
  url: string;
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Stops the process (SIGKILL by default) and resolves once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function tempDir(prefix = "neon-rel-"): string {
  return sharedTempDir(prefix);
}

/** A key of the 64-character [a-z0-9] form the server accepts in NEON_EMULATOR_API_KEY. */
export function randomKey(): string {
  const chars = "abcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (const b of crypto.getRandomValues(new Uint8Array(64))) out += chars[b % 36];
  return out;
}

/** Spawns the compiled server on a free port and resolves once it logs that it listens. */
export function spawnServer(env: Record<string, string>, timeoutMs = 30_000): Promise<Proc> {
  const proc = spawn(process.execPath, startArgs(), {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      NEON_EMULATOR_SEED: "none",
      NEON_EMULATOR_LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout?.setEncoding("utf8");
  proc.stderr?.setEncoding("utf8");
  proc.stderr?.on("data", (d: string) => {
    err += d;
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
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
    proc.stdout?.on("data", (d: string) => {
      const before = out.length;
      out += d;
      if (before > 0 && out.slice(0, before).includes("neon-emulator listening")) return;
      const line = out.split("\n").find((l) => l.includes("neon-emulator listening"));
      if (!line) return;
      clearTimeout(timer);
      proc.off("exit", onExit);
      const url = (JSON.parse(line) as { url: string }).url.replace(/\/api\/v2$/, "");
      resolve({
        url,
        proc,
        stdout: () => out,
        stderr: () => err,
        stop: async (signal = "SIGKILL") => {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
          await exited;
        },
      });
    });
  });
}

export interface Reply {
  status: number; // 0: no response (connection reset or refused)
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  body: any;
  text: string;
  /** performance.now() just before the request was written, and when the response was complete. */
  startedAt: number;
  endedAt: number;
  error?: string;
}

/** HTTP on a keep-alive agent with at most `sockets` connections, so load is bounded and real. */
export class Client {
  readonly agent: http.Agent;
  constructor(
    readonly baseUrl: string,
    sockets = 100,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  }

  request(
    method: string,
    p: string,
    opts: { key?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<Reply> {
    const url = new URL(p, this.baseUrl);
    const payload =
      opts.body === undefined
        ? undefined
        : typeof opts.body === "string"
          ? opts.body
          : JSON.stringify(opts.body);
    const headers: Record<string, string> = { accept: "application/json", ...(opts.headers ?? {}) };
    if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
    if (payload !== undefined) {
      headers["content-type"] ??= "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve) => {
      const startedAt = performance.now();
      const fail = (e: Error) =>
        resolve({
          status: 0,
          body: undefined,
          text: "",
          startedAt,
          endedAt: performance.now(),
          error: e.message,
        });
      const req = http.request(
        url,
        { method, headers, agent: this.agent, timeout: opts.timeoutMs ?? 120_000 },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            text += d;
          });
          res.on("error", fail);
          res.on("end", () => {
            let body: unknown = text;
            try {
              body = text ? JSON.parse(text) : undefined;
            } catch {
              // not JSON: keep the text for the assertion message
            }
            resolve({ status: res.statusCode ?? 0, body, text, startedAt, endedAt: performance.now() });
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error("request timed out")));
      req.on("error", fail);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Fails with the body in the message, so a wrong status shows why. */
export function must(res: Reply, status: number, what = ""): Reply {
  if (res.status !== status)
    throw new Error(`${what} expected HTTP ${status}, got ${res.status}: ${res.text || res.error}`);
  return res;
}

/** Opens a (stopped) server's database read-only and returns `PRAGMA integrity_check`. */
export function integrityCheck(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.pragma("integrity_check") as { integrity_check: string }[])
      .map((r) => r.integrity_check)
      .join("; ");
  } finally {
    db.close();
  }
}

/** Runs a read-only query against a database file. */
export function readDb<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
