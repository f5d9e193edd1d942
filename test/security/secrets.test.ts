import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client, must, type Proc, randomKey, spawnServer, tempDir } from "../reliability/support/server.js";

/**
 * After a real-server run that creates, lists, uses and revokes keys (and fails to use some),
 * no key value appears in the database files (main, -wal, -shm, read while the server runs and
 * after it stops) or in anything the server printed: neither the keys minted by POST /api_keys
 * and POST /_emulator/accounts, nor the one configured through NEON_EMULATOR_API_KEY.
 */

const procs: Proc[] = [];
afterAll(async () => {
  for (const p of procs) await p.stop("SIGKILL");
});

function dbFiles(file: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const suffix of ["", "-wal", "-shm", "-journal"])
    if (fs.existsSync(file + suffix)) out.set(path.basename(file + suffix), fs.readFileSync(file + suffix));
  return out;
}

function findings(secrets: Map<string, string>, places: Map<string, Buffer | string>): string[] {
  const found: string[] = [];
  for (const [where, content] of places) {
    const bytes = typeof content === "string" ? Buffer.from(content) : content;
    for (const [label, secret] of secrets) {
      // The key as typed, and as UTF-16 (how a JS string might be dumped) for good measure.
      if (bytes.includes(Buffer.from(secret)) || bytes.includes(Buffer.from(secret, "utf16le")))
        found.push(`${label} found in ${where}`);
    }
  }
  return found;
}

describe("key secrets at rest and in logs", () => {
  it("never appear in the database files or the server's output", async () => {
    const dir = tempDir("neon-secrets-");
    const file = path.join(dir, "secrets.db");
    const configured = randomKey();
    const env = {
      NEON_EMULATOR_DB: file,
      NEON_EMULATOR_API_KEY: configured,
      NEON_EMULATOR_LOG_LEVEL: "debug",
    };
    const secrets = new Map<string, string>([["NEON_EMULATOR_API_KEY", configured]]);
    const output = new Map<string, string>();
    const files = new Map<string, Buffer>();

    for (let run = 0; run < 2; run++) {
      const server = await spawnServer(env);
      procs.push(server);
      const c = new Client(server.url, 8);
      try {
        const made: { id: number; key: string }[] = [];
        for (let i = 0; i < 8; i++) {
          const r = must(
            await c.request("POST", "/api/v2/api_keys", {
              key: configured,
              body: { key_name: `s${run}-${i}` },
            }),
            200,
          );
          made.push({ id: r.body.id, key: r.body.key });
          secrets.set(`key s${run}-${i}`, r.body.key);
        }
        const listed = must(await c.request("GET", "/api/v2/api_keys", { key: configured }), 200);
        expect(listed.text).not.toContain(made[0]?.key);
        for (const k of made) {
          must(await c.request("GET", "/api/v2/projects", { key: k.key }), 200);
          must(await c.request("POST", "/api/v2/projects", { key: k.key, body: { project: {} } }), 201);
        }
        for (const k of made.slice(0, 4)) {
          const revoked = must(
            await c.request("DELETE", `/api/v2/api_keys/${k.id}`, { key: configured }),
            200,
          );
          expect(revoked.text).not.toContain(k.key);
          must(await c.request("GET", "/api/v2/projects", { key: k.key }), 401);
        }
        const other = must(
          await c.request("POST", "/_emulator/accounts", { key: configured, body: {} }),
          201,
        );
        secrets.set(`account key ${run}`, other.body.key.key);
        must(await c.request("GET", "/api/v2/api_keys", { key: other.body.key.key }), 200);
        // Failures carrying a key: bad input, unknown ids, wrong methods, oversized bodies, junk auth.
        const live = made[5]?.key as string;
        await c.request("POST", "/api/v2/api_keys", { key: live, body: { key_name: "" } });
        await c.request("GET", "/api/v2/projects/nope", { key: live });
        await c.request("PUT", "/api/v2/api_keys", { key: live });
        await c.request("POST", "/api/v2/api_keys", {
          key: live,
          body: { key_name: "x".repeat(2 * 1024 * 1024) },
        });
        await c.request("GET", "/api/v2/projects", { headers: { authorization: `Basic ${live}` } });
        await c.request("GET", "/api/v2/projects", { headers: { authorization: `Bearer ${live} extra` } });
        await c.request("POST", "/api/v2/projects", { key: live, body: "{not json" });
        // While it runs, the WAL holds the recent writes.
        for (const [n, b] of dbFiles(file)) files.set(`${n} (running, pass ${run})`, b);
        await server.stop(run === 0 ? "SIGKILL" : "SIGTERM");
        output.set(`stdout (pass ${run})`, server.stdout());
        output.set(`stderr (pass ${run})`, server.stderr());
      } finally {
        c.close();
      }
    }
    for (const [n, b] of dbFiles(file)) files.set(`${n} (stopped)`, b);

    expect(secrets.size).toBeGreaterThan(15);
    expect(files.size).toBeGreaterThan(2);
    expect(output.get("stdout (pass 0)")).toContain("neon-emulator listening");
    const places = new Map<string, Buffer | string>([...files, ...output]);
    expect(findings(secrets, places)).toEqual([]);
    // The scan itself can find things: each key's hash is stored, and a planted key is found.
    expect(
      findings(new Map([["planted", "planted-secret"]]), new Map([["x", Buffer.from("..planted-secret..")]])),
    ).toEqual(["planted found in x"]);
  }, 120_000);
});
