import http from "node:http";
import Database from "better-sqlite3";

/**
 * Real-server support for the reliability and security suites: the server spawned as `npm start` runs it
 * whose stdout AND stderr are kept whole (the secrets scan reads both), and an HTTP client on
 * a bounded keep-alive agent that never throws (a reset connection is an outcome to record).
 */

export const SOAK = Boolean(process.env.SOAK);

/** The one server spawner (test/helpers/server.ts), under the names these suites use. */
export {
  type RunningServer as Proc,
  randomKey,
  startServer as spawnServer,
  tempDir,
} from "../../helpers/server.js";

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
