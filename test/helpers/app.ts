import pino from "pino";
import { createApp } from "../../src/app.js";
import type { ComputeDriver } from "../../src/compute/driver.js";
import type { Config, Ctx } from "../../src/context.js";
import { ensureDefaultAccount } from "../../src/control-plane/accounts/service.js";
import { createApiKey } from "../../src/control-plane/api-keys/service.js";
import { DEFAULT_OPERATION_MS } from "../../src/control-plane/operations/rules.js";
import { ManualClock } from "../../src/platform/clock.js";
import { openStorage } from "../../src/platform/db.js";
import { IdGenerator } from "../../src/platform/ids.js";
import { Worker } from "../../src/worker/loop.js";

export const CLOCK_START = Date.parse("2025-01-01T00:00:00Z");

export interface TestApp {
  ctx: Ctx;
  worker: Worker;
  /** The default account's manual time (each account has its own). */
  clock: { now(): number; set(ms: number): void };
  key: string;
  accountId: string;
  close(): void;
  /** Sends a request through the app in-process, as from 127.0.0.1. */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<TestResponse>;
  /** A request with the default key and JSON body. */
  api(method: string, path: string, body?: unknown): Promise<TestResponse>;
  /** Manual clock: move time forward and run everything due. */
  advance(seconds: number): number;
}

export interface TestResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field in tests
  body: any;
  headers: Headers;
  text: string;
}

/** The settings tests run with: paid plan, default operation durations, hourly checks. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    plan: "paid",
    domain: "neon.tech",
    maxBodyBytes: 64 * 1024,
    operationMs: { ...DEFAULT_OPERATION_MS },
    checkIntervalSeconds: 3600,
    operationRetentionDays: 180,
    projectRecoverySeconds: 7 * 86400,
    ...overrides,
  };
}

/** A fresh app over its own `:memory:` database with migrations applied, a default account and key. */
export function createTestApp(
  options: {
    plan?: "paid" | "free";
    config?: Partial<Config>;
    driver?: ComputeDriver;
    /** Wall time the rate limits count on (config.rateLimits). */
    rateClock?: () => number;
  } = {},
): TestApp {
  const storage = openStorage(":memory:");
  const clock = new ManualClock(CLOCK_START);
  const ctx: Ctx = {
    db: storage.db,
    clock,
    ids: new IdGenerator(),
    config: testConfig({ plan: options.plan ?? "paid", ...options.config }),
  };
  const worker = new Worker(ctx, options.driver ? { driver: options.driver } : {});
  const account = ensureDefaultAccount(ctx);
  const key = createApiKey(ctx, account.id, "test").key;
  const app = createApp(ctx, {
    logger: pino({ level: "silent" }),
    worker,
    ...(options.rateClock ? { rateClock: options.rateClock } : {}),
  });
  const env = { incoming: { socket: { remoteAddress: "::ffff:127.0.0.1" } } };
  const request = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type"))
        (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    const res = await app.request(path, init, env);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text, tests assert on it
    }
    return { status: res.status, body: parsed, headers: res.headers, text };
  };
  return {
    ctx,
    worker,
    clock: { now: () => clock.now(account.id), set: (ms: number) => clock.set(account.id, ms) },
    key,
    accountId: account.id,
    close: () => storage.close(),
    request,
    api: (method, path, body) => request(method, path, body, { authorization: `Bearer ${key}` }),
    advance: (seconds) => worker.advance(account.id, seconds),
  };
}

/** Fails with the body in the message, so a wrong status shows why. */
export function expectStatus(res: TestResponse, status: number): void {
  if (res.status !== status) throw new Error(`expected HTTP ${status}, got ${res.status}: ${res.text}`);
}
