import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { http, type RunningServer, startServer, tempDir } from "../helpers/server.js";
import { startArgs } from "../helpers/start-command.js";

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop("SIGKILL");
});

/** A fresh database with no key configured: the server generates and prints its first key. */
async function freshServer() {
  const s = await startServer({ NEON_EMULATOR_DB: path.join(tempDir(), "db.sqlite") });
  servers.push(s);
  const key = s.stdout.join("\n").match(/^ {2}([a-z0-9]{64}) {3}/m)?.[1] ?? "";
  expect(key).toMatch(/^[a-z0-9]{64}$/);
  return { s, key };
}

// `npm start` begins from a V8 heap captured when the build ran (see src/main.ts). Everything a
// run must own — randomness, the process id, the host — has to be read after that, never baked in.
describe("start-up snapshot", () => {
  it("is what npm start runs", () => {
    expect(startArgs()).toContain("--snapshot-blob");
  });

  it("gives every process its own randomness, pid and host", async () => {
    const [a, b] = await Promise.all([freshServer(), freshServer()]);
    expect(a.key).not.toBe(b.key);

    const made = await Promise.all(
      [a, b].map(({ s, key }) => http(s.url, key, "POST", "/api/v2/projects", { project: {} })),
    );
    for (const m of made) expect(m.status).toBe(201);
    const [pa, pb] = made.map((m) => m.body);
    expect(pa.project.id).not.toBe(pb.project.id);
    expect(pa.branch.id).not.toBe(pb.branch.id);
    expect(pa.endpoints[0].id).not.toBe(pb.endpoints[0].id);
    expect(pa.operations[0].id).not.toBe(pb.operations[0].id);

    const requestIds = await Promise.all(
      [a, b].map(async ({ s }) => (await fetch(`${s.url}/_emulator/health`)).headers.get("x-request-id")),
    );
    expect(requestIds[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIds[0]).not.toBe(requestIds[1]);

    for (const { s } of [a, b]) {
      const listening = JSON.parse(s.stdout.find((l) => l.includes("neon-emulator listening")) ?? "{}");
      expect(listening).toMatchObject({ pid: s.proc.pid, hostname: os.hostname() });
    }
  });
});
