import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  Client,
  type Proc,
  randomKey,
  SOAK,
  sleep,
  spawnServer,
  tempDir,
} from "../reliability/support/server.js";

/**
 * Unauthenticated clients cannot hold the emulator's resources (attack review: 400 slow readers
 * took 1.2 GB): the HTTP port holds at most NEON_EMULATOR_MAX_CONNECTIONS connections, the front
 * door at most that many clients not yet logged in (beyond: Postgres' 53300), and an idle or slow
 * client is dropped within seconds. Measured: the server's memory under the abuse stays bounded
 * and health answers throughout.
 */

const procs: Proc[] = [];
const opened: net.Socket[] = [];
afterAll(async () => {
  for (const s of opened) s.destroy();
  for (const p of procs) await p.stop("SIGKILL");
});

async function start(env: Record<string, string>): Promise<{ server: Proc; http: number; pg: number }> {
  const dir = tempDir();
  fs.chmodSync(dir, 0o755);
  const server = await spawnServer({
    NEON_EMULATOR_DB: path.join(dir, "caps.db"),
    NEON_EMULATOR_API_KEY: randomKey(),
    NEON_EMULATOR_COMPUTE: "postgres",
    NEON_EMULATOR_PG_PORT: "0",
    ...env,
  });
  procs.push(server);
  return { server, http: Number(new URL(server.url).port), pg: server.pgPort ?? 0 };
}

/** Opens `n` connections that send nothing; resolves once all are connected. */
async function idle(port: number, n: number): Promise<net.Socket[]> {
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(port, "127.0.0.1", () => resolve(s));
          s.on("error", reject);
        }),
    ),
  );
  opened.push(...sockets);
  return sockets;
}

/** What a new connection receives before it is closed (or "open" if it is still open after `ms`). */
function fate(port: number, ms = 2000): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    let got = "";
    s.setEncoding("latin1");
    s.on("data", (d: string) => {
      got += d;
    });
    s.on("error", () => {});
    s.on("close", () => resolve(`closed:${got}`));
    setTimeout(() => {
      s.destroy();
      resolve(`open:${got}`);
    }, ms);
  });
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

describe("connection caps", () => {
  it("the HTTP port closes connections beyond the cap at once; the front door answers 53300 to a client beyond it", async () => {
    const { server, http, pg } = await start({ NEON_EMULATOR_MAX_CONNECTIONS: "20" });
    const c = new Client(server.url, 1);
    expect((await c.request("GET", "/_emulator/health")).status).toBe(200);
    c.close();

    const held = await idle(http, 20);
    await sleep(200);
    expect(await fate(http)).toBe("closed:");
    for (const s of held) s.destroy();
    await sleep(200);
    const after = new Client(server.url, 1);
    expect((await after.request("GET", "/_emulator/health")).status).toBe(200);
    after.close();

    const waiting = await idle(pg, 20);
    await sleep(200);
    const refused = await fate(pg);
    expect(refused).toMatch(/^closed:E/);
    expect(refused).toContain("C53300");
    expect(refused).toContain("sorry, too many clients already");
    for (const s of waiting) s.destroy();
    await sleep(200);
    // Room again: a client is read (it sends nothing here, so it is kept waiting, not refused).
    expect(await fate(pg, 500)).toBe("open:");
  }, 30_000);

  it("under idle and slow clients on both ports the server's memory stays bounded and health answers", async () => {
    const { server, http, pg } = await start({});
    const pid = server.proc.pid as number;
    const before = rssMb(pid);
    const n = SOAK ? 1900 : 600;
    await idle(http, n);
    await idle(pg, n);
    // Slow clients: a header a byte at a time.
    const slow = await idle(http, 50);
    const drip = setInterval(() => {
      for (const s of slow) if (!s.destroyed) s.write("G");
    }, 100);
    const c = new Client(server.url, 1);
    let peak = 0;
    const answered: number[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        const h = await c.request("GET", "/_emulator/health");
        answered.push(h.status);
        peak = Math.max(peak, rssMb(pid));
        await sleep(100);
      }
    } finally {
      clearInterval(drip);
      c.close();
    }
    console.log(
      `connection abuse: ${n} idle HTTP + ${n} idle Postgres + 50 slow clients: RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MB`,
    );
    expect(answered.every((s) => s === 200)).toBe(true);
    expect(peak).toBeLessThan(200);
  }, 60_000);
});

describe("fuzzed start-up packets at the front door", () => {
  it("random start-up packets get an error or a close, never a hang or a crash", async () => {
    const { server, pg } = await start({ NEON_EMULATOR_PG_AUTH_TIMEOUT: "2" });
    const fc = await import("fast-check");
    const packet = fc.oneof(
      // A length-prefixed packet with a random protocol code and random bytes.
      fc
        .tuple(fc.integer({ min: 0, max: 0x7fffffff }), fc.uint8Array({ maxLength: 300 }))
        .map(([code, body]) => {
          const b = Buffer.alloc(8 + body.length);
          b.writeInt32BE(b.length, 0);
          b.writeInt32BE(code, 4);
          Buffer.from(body).copy(b, 8);
          return b;
        }),
      // Protocol 3.0 with random NUL-separated parameters (some well-formed, many not).
      fc
        .array(fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 })), { maxLength: 6 })
        .map((pairs) => {
          const body = Buffer.from(`${pairs.map(([k, v]) => `${k}\0${v}\0`).join("")}\0`);
          const b = Buffer.alloc(8 + body.length);
          b.writeInt32BE(b.length, 0);
          b.writeInt32BE(196608, 4);
          body.copy(b, 8);
          return b;
        }),
      // A lying length.
      fc
        .tuple(fc.integer({ min: -5, max: 100_000_000 }), fc.uint8Array({ maxLength: 40 }))
        .map(([len, rest]) => {
          const b = Buffer.alloc(4 + rest.length);
          b.writeInt32BE(len, 0);
          Buffer.from(rest).copy(b, 4);
          return b;
        }),
    );
    const cases = fc.sample(packet, { numRuns: SOAK ? 2000 : 150, seed: 42 });
    const outcomes = await Promise.all(
      cases.map(
        (bytes) =>
          new Promise<string>((resolve) => {
            const s = net.connect(pg, "127.0.0.1", () => s.write(bytes));
            let got = "";
            s.setEncoding("latin1");
            s.on("data", (d: string) => {
              got += d;
            });
            s.on("error", () => {});
            s.on("close", () =>
              resolve(got.startsWith("E") ? "error" : got === "" ? "closed" : `other:${got[0]}`),
            );
            // The auth timeout (2 s) ends anything still waiting for more bytes.
            setTimeout(() => {
              s.destroy();
              resolve("hung");
            }, 6000);
          }),
      ),
    );
    expect(outcomes.filter((o) => o === "hung")).toEqual([]);
    const c = new Client(server.url, 1);
    expect((await c.request("GET", "/_emulator/health")).status).toBe(200);
    c.close();
    expect(server.proc.exitCode).toBeNull();
  }, 60_000);
});
