import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Client,
  must,
  type Proc,
  randomKey,
  sleep,
  spawnServer,
  tempDir,
} from "../reliability/support/server.js";

/**
 * Abuse below the JSON layer, against a real server: truncated and abandoned uploads, lying
 * Content-Length, oversized chunked bodies, garbage bytes. The server answers what it can with
 * a 4xx, stays up, writes nothing, and does not log the client's misbehaviour as its own error.
 */

let server: Proc;
let c: Client;
let port: number;
const key = randomKey();

beforeAll(async () => {
  server = await spawnServer({
    NEON_EMULATOR_DB: path.join(tempDir(), "abuse.db"),
    NEON_EMULATOR_API_KEY: key,
    NEON_EMULATOR_MAX_BODY_BYTES: "4096",
  });
  port = Number(new URL(server.url).port);
  c = new Client(server.url, 4);
});
afterAll(async () => {
  c?.close();
  await server?.stop("SIGKILL");
});

/** Writes raw bytes on a fresh connection, then ends (half-closes) or destroys it; resolves with what came back. */
function raw(bytes: string, then: "end" | "destroy" | "wait", afterMs = 200): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1");
    let out = "";
    sock.setEncoding("latin1");
    sock.on("data", (d: string) => {
      out += d;
    });
    sock.on("error", () => resolve(out));
    sock.on("close", () => resolve(out));
    sock.write(bytes, "latin1");
    setTimeout(() => {
      if (then === "end") sock.end();
      else if (then === "destroy") sock.destroy();
      else setTimeout(() => sock.destroy(), 300);
    }, afterMs);
  });
}

const statusLines = (out: string) => [...out.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
const head = (method: string, p: string, extra: string) =>
  `${method} ${p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${extra}\r\n`;

describe("HTTP-level abuse on a real server", () => {
  it("a client that hangs up mid-body is not logged as an internal error, and nothing is written", async () => {
    const before = server.stdout().length;
    for (let i = 0; i < 5; i++) {
      await raw(
        `${head("POST", "/api/v2/api_keys", "Content-Length: 100\r\n")}{"key_name":"abandoned-${i}"`,
        "destroy",
      );
      const out = await raw(
        `${head("POST", "/api/v2/api_keys", "Content-Length: 100\r\n")}{"key_name":"half-${i}"`,
        "end",
      );
      for (const s of statusLines(out)) expect(s, out).toBeLessThan(500);
    }
    await sleep(300);
    const logged = server
      .stdout()
      .slice(before)
      .split("\n")
      .filter((l) => /"level":(50|60)/.test(l));
    expect(logged).toEqual([]);
    const keys = must(await c.request("GET", "/api/v2/api_keys", { key }), 200);
    expect(keys.body.map((k: { name: string }) => k.name)).toEqual(["NEON_EMULATOR_API_KEY"]);
  });

  it("oversized chunked bodies, lying lengths and garbage get 4xx answers and the server stays up", async () => {
    let chunked = "";
    for (let i = 0; i < 4; i++) chunked += `1000\r\n${"x".repeat(4096)}\r\n`;
    const cases: [string, string][] = [
      [
        "oversized chunked body",
        `${head("POST", "/api/v2/api_keys", "Transfer-Encoding: chunked\r\n")}${chunked}0\r\n\r\n`,
      ],
      [
        "Content-Length far above the limit",
        `${head("POST", "/api/v2/api_keys", "Content-Length: 99999999\r\n")}{}`,
      ],
      [
        "Content-Length shorter than the body",
        `${head("POST", "/api/v2/api_keys", "Content-Length: 10\r\n")}{"key_name":"liar"}`,
      ],
      ["garbage bytes", "\u0000\u0001\u0002 GARBAGE\r\n\r\n"],
      [
        "a 100 kB header",
        `GET /api/v2/projects HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(100_000)}\r\n\r\n`,
      ],
      [
        "gzip-labelled plain body",
        `${head("POST", "/api/v2/api_keys", "Content-Encoding: gzip\r\nContent-Length: 5\r\n")}abcde`,
      ],
      [
        "two Authorization headers",
        `GET /api/v2/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer x\r\n\r\n`,
      ],
    ];
    const before = server.stdout().length;
    for (const [what, bytes] of cases) {
      const out = await raw(bytes, "wait");
      for (const s of statusLines(out)) expect(s, `${what}: ${out.slice(0, 300)}`).toBeLessThan(500);
    }
    must(await c.request("GET", "/_emulator/health"), 200);
    // A body with a Content-Length above the limit is refused by that header alone (src/app.ts).
    const big = await c.request("POST", "/api/v2/api_keys", {
      key,
      body: { key_name: "x".repeat(5000) },
    });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      message: expect.stringContaining("4096 bytes"),
    });
    const keys = must(await c.request("GET", "/api/v2/api_keys", { key }), 200);
    expect(keys.body.map((k: { name: string }) => k.name)).toEqual(["NEON_EMULATOR_API_KEY"]);
    expect(
      server
        .stdout()
        .slice(before)
        .split("\n")
        .filter((l) => /"level":(50|60)/.test(l)),
    ).toEqual([]);
  });

  it("a request without a key is refused before its body is read: 401 at once, while the body never comes", async () => {
    const withoutKey = `POST /api/v2/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3000\r\n\r\n{`;
    const out = await raw(withoutKey, "wait", 300);
    expect(statusLines(out)).toEqual([401]);
    const withKey = await raw(head("POST", "/api/v2/projects", "Content-Length: 3000\r\n"), "wait", 300);
    expect(statusLines(withKey)).toEqual([]); // a client with a key is waited for
  });

  it("a client that never finishes its headers is cut off after 10 s with 408", async () => {
    const out = await raw("GET /_emulator/health HTTP/1.1\r\nHost: x\r\nX-Slow: ", "wait", 12_000);
    expect(statusLines(out)).toEqual([408]);
    expect(out).toContain('"code":"INVALID_REQUEST"');
  }, 20_000);

  it("TRACE and methods Node does not know get 405 JSON, malformed requests 400 JSON, never a 500", async () => {
    const before = server.stdout().length;
    for (const [method, status] of [
      ["TRACE", 405],
      ["TRACK", 405],
      ["FOO", 405],
      ["CONNECT", 405],
    ] as const) {
      const out = await raw(head(method, "/api/v2/projects", ""), "wait");
      expect(statusLines(out), `${method}: ${out.slice(0, 200)}`).toEqual([status]);
      const body = JSON.parse(out.slice(out.indexOf("\r\n\r\n") + 4)) as { code: string };
      expect(body.code).toBe("METHOD_NOT_ALLOWED");
    }
    const bad = await raw("GET /api/v2/projects HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", "wait");
    expect(statusLines(bad)).toEqual([400]);
    expect(JSON.parse(bad.slice(bad.indexOf("\r\n\r\n") + 4))).toMatchObject({ code: "INVALID_REQUEST" });
    must(await c.request("GET", "/_emulator/health"), 200);
    expect(
      server
        .stdout()
        .slice(before)
        .split("\n")
        .filter((l) => /"level":(50|60)/.test(l)),
    ).toEqual([]);
  });
});
