import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";
import type { Exchange } from "./contract.js";

/** The CLIs the e2e suites drive: npm `neon` 6.x, and `neonctl` 5 (its compatibility shim over neon 5). */
export const NEON_CLIS = {
  "neon 6": path.resolve("node_modules/neon/dist/cli.js"),
  "neonctl 5": path.resolve("node_modules/neonctl/bin/cli.js"),
} as const;
export type NeonCli = keyof typeof NEON_CLIS;

/**
 * A real server (child process) behind a tiny recording proxy. The CLI and the SDK talk to the
 * proxy, so every response they receive is on record for the contract check, with its raw
 * status and Content-Type.
 */
export interface E2E {
  server: RunningServer;
  key: string;
  /** Base URL clients use: the proxy's address plus /api/v2. */
  apiBase: string;
  traffic: Exchange[];
  /** Labels the exchanges of the next requests (shown in contract failures). */
  step(name: string): void;
  /** Runs the neon CLI against the emulator; resolves with its stdout, rejects with stderr. */
  neon(args: string[]): Promise<string>;
  /** The CLI's working directory (files it writes, e.g. `env pull`, land here). */
  cwd: string;
  /** As neon(), parsing stdout as JSON. */
  neonJson<T = unknown>(args: string[]): Promise<T>;
  close(): Promise<void>;
}

function startRecordingProxy(
  target: number,
  traffic: Exchange[],
  currentStep: () => string,
): Promise<http.Server> {
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const upstream = http.request(
        { host: "127.0.0.1", port: target, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          const body: Buffer[] = [];
          up.on("data", (c: Buffer) => body.push(c));
          up.on("end", () => {
            const text = Buffer.concat(body).toString("utf8");
            const url = new URL(req.url ?? "/", "http://proxy");
            traffic.push({
              step: currentStep(),
              method: req.method ?? "GET",
              path: url.pathname,
              query: url.search,
              status: up.statusCode ?? 0,
              contentType: String(up.headers["content-type"] ?? ""),
              body: text,
            });
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(Buffer.concat(body));
          });
        },
      );
      upstream.on("error", (err) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(String(err));
      });
      upstream.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) => proxy.listen(0, "127.0.0.1", () => resolve(proxy)));
}

export async function startE2E(env: Record<string, string> = {}, cli: NeonCli = "neon 6"): Promise<E2E> {
  const dir = tempDir("neon-emulator-e2e-");
  // With real computes, their servers run as an unprivileged user when the tests run as root.
  fs.chmodSync(dir, 0o755);
  const key = randomKey();
  let server: RunningServer;
  try {
    server = await startServer({
      NEON_EMULATOR_DB: path.join(dir, "e2e.db"),
      NEON_EMULATOR_API_KEY: key,
      ...env,
    });
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let closing = false;
  // An emulator that ends before the file is done says why (its output is otherwise kept unread).
  server.proc.once("exit", (code, signal) => {
    if (!closing)
      console.error(
        `the emulator under test ended (code ${code}, signal ${signal}); its output:\n${server.stdout()}\n${server.stderr()}`,
      );
  });
  const traffic: Exchange[] = [];
  let step = "setup";
  const proxy = await startRecordingProxy(server.port, traffic, () => step);
  const apiBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/v2`;

  // The CLI gets its own home, config directory and working directory, and no ambient credentials.
  const home = path.join(dir, "home");
  fs.mkdirSync(home);
  const cliEnv: NodeJS.ProcessEnv = { ...process.env, CI: "true", HOME: home, XDG_CONFIG_HOME: home };
  for (const name of ["NEON_API_KEY", "NEON_API_HOST", "NEON_PROFILE"]) delete cliEnv[name];
  const globalArgs = [
    "--api-host",
    apiBase,
    "--api-key",
    key,
    "--no-analytics",
    "--config-dir",
    path.join(home, "neonctl"),
    "-o",
    "json",
  ];

  const neon = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [NEON_CLIS[cli], ...args, ...globalArgs],
        { env: cliEnv, cwd: home, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`neon ${args.join(" ")} failed (${err.message}):\n${stderr}\n${stdout}`));
          else resolve(stdout);
        },
      );
    });

  return {
    server,
    key,
    apiBase,
    traffic,
    step: (name) => {
      step = name;
    },
    neon,
    cwd: home,
    neonJson: async <T>(args: string[]) => {
      const out = await neon(args);
      try {
        return JSON.parse(out) as T;
      } catch {
        throw new Error(`neon ${args.join(" ")} printed no JSON:\n${out}`);
      }
    },
    close: async () => {
      closing = true;
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        proxy.closeAllConnections();
      });
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` returns a value (not undefined) or the deadline passes. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
