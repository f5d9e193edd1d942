import { execFile, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { claimDatabase, DatabaseInUse } from "../../src/platform/server-lock.js";
import { http, type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";
import { startArgs } from "../helpers/start-command.js";

const run = promisify(execFile);
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop("SIGKILL");
});

async function start(env: Record<string, string>) {
  const s = await startServer(env);
  servers.push(s);
  return s;
}

function call(s: RunningServer, key: string, method: string, p: string, body?: unknown) {
  return http(s.url, key, method, p, body);
}

describe("real server", () => {
  it("keys and revocations survive SIGKILL and a restart on the same file", async () => {
    const db = path.join(tempDir(), "db.sqlite");
    const key = randomKey();
    const env = { NEON_EMULATOR_DB: db, NEON_EMULATOR_API_KEY: key };
    let s = await start(env);
    expect((await fetch(`${s.url}/_emulator/health`)).status).toBe(200);
    const kept = await call(s, key, "POST", "/api/v2/api_keys", { key_name: "kept" });
    const doomed = await call(s, key, "POST", "/api/v2/api_keys", { key_name: "doomed" });
    expect((await call(s, key, "DELETE", `/api/v2/api_keys/${doomed.body.id}`)).status).toBe(200);
    const project = await call(s, key, "POST", "/api/v2/projects", { project: { name: "durable" } });
    expect(project.status).toBe(201);
    await s.stop("SIGKILL");

    s = await start(env);
    expect((await call(s, kept.body.key, "GET", "/api/v2/api_keys")).status).toBe(200);
    expect((await call(s, doomed.body.key, "GET", "/api/v2/api_keys")).status).toBe(401);
    const list = await call(s, key, "GET", "/api/v2/projects");
    expect(list.body.projects.map((p: { name: string }) => p.name)).toEqual(["durable"]);
    const keys = await call(s, key, "GET", "/api/v2/api_keys");
    expect(
      (keys.body as unknown as { name: string; last_used_from_addr: string }[]).find(
        (k) => k.name === "kept",
      ),
    ).toMatchObject({
      last_used_from_addr: "127.0.0.1",
    });
    // Nothing on disk holds a key in plain text.
    for (const f of fs.readdirSync(path.dirname(db))) {
      const bytes = fs.readFileSync(path.join(path.dirname(db), f));
      for (const k of [key, kept.body.key, doomed.body.key])
        expect(bytes.includes(Buffer.from(k))).toBe(false);
    }
  });

  it("prints a generated key once on the first start of an empty database, never again", async () => {
    const db = path.join(tempDir(), "db.sqlite");
    let s = await start({ NEON_EMULATOR_DB: db });
    const printed = s.stdout().match(/^ {2}([a-z0-9]{64}) {3}/m)?.[1] ?? "";
    expect(printed).toMatch(/^[a-z0-9]{64}$/);
    expect((await call(s, printed, "GET", "/api/v2/api_keys")).status).toBe(200);
    expect(await s.stop("SIGTERM")).toBe(0);
    s = await start({ NEON_EMULATOR_DB: db });
    expect(s.stdout()).not.toMatch(/[a-z0-9]{64}/);
    expect((await call(s, printed, "GET", "/api/v2/api_keys")).status).toBe(200);
  });

  it("a SIGTERM lets the requests under way get their answers (the work they did is not left unanswered); an idle keep-alive connection does not hold the stop", async () => {
    const db = path.join(tempDir(), "db.sqlite");
    const key = randomKey();
    const s = await start({ NEON_EMULATOR_DB: db, NEON_EMULATOR_API_KEY: key });
    const { port } = new URL(s.url);
    // An idle keep-alive connection: it must not keep the server up for node's keep-alive timeout.
    const idle = net.connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => idle.once("connect", resolve));
    idle.write(`GET /_emulator/health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`);
    await new Promise((resolve) => idle.once("data", resolve));
    const idleClosed = new Promise((resolve) => idle.once("close", resolve));
    // A request under way: its headers are in, its body still coming when the signal arrives.
    const body = JSON.stringify({ project: { name: "made-during-the-stop" } });
    const busy = net.connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => busy.once("connect", resolve));
    let answer = "";
    busy.on("data", (d) => {
      answer += d.toString();
    });
    const busyClosed = new Promise((resolve) => busy.once("close", resolve));
    busy.write(
      `POST /api/v2/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const stopped = s.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    busy.write(body.slice(10));
    await busyClosed;
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
    expect(answer).toContain('"made-during-the-stop"');
    await idleClosed;
    expect(await stopped).toBe(0);
    // Well inside node's 5 s keep-alive timeout, which the idle connection would have held it for.
    expect(Date.now() - started).toBeLessThan(2500);
    const again = await start({ NEON_EMULATOR_DB: db, NEON_EMULATOR_API_KEY: key });
    const listed = await call(again, key, "GET", "/api/v2/projects");
    expect(listed.body.projects.map((p: { name: string }) => p.name)).toEqual(["made-during-the-stop"]);
  });

  it("refuses bad configuration at start with a message naming the variable", async () => {
    for (const [name, value] of [
      ["PORT", "99999"],
      ["NEON_EMULATOR_API_KEY", "short"],
      ["NEON_EMULATOR_CLOCK", "sundial"],
      ["NEON_EMULATOR_OPERATION_MS", "start_compute=fast"],
      ["NEON_EMULATOR_PG_PORT", "70000"],
      ["NEON_EMULATOR_PG_AUTH_TIMEOUT", "0"],
      ["NEON_EMULATOR_POOLER_MAX_CLIENTS", "many"],
      ["NEON_EMULATOR_LIMITS", "projects=0"],
      ["NEON_EMULATOR_LIMITS", "tables=3"],
      ["NEON_EMULATOR_RATE_LIMIT", "strict"],
      ["NEON_EMULATOR_OPERATION_RETENTION_DAYS", "-1"],
    ] as const) {
      const err = await run(process.execPath, startArgs(), {
        env: { ...process.env, [name]: value },
      }).catch((e) => e);
      expect(err.code, name).toBe(2);
      expect(err.stderr).toContain(name);
    }
    const noBinaries = await run(process.execPath, startArgs(), {
      env: { ...process.env, NEON_EMULATOR_COMPUTE: "postgres", NEON_EMULATOR_PG_BIN: "/no/such/folder" },
    }).catch((e) => e);
    expect(noBinaries.code).toBe(2);
    expect(noBinaries.stderr).toContain("NEON_EMULATOR_PG_BIN: /no/such/folder holds no runnable postgres");
  });

  it("the Postgres front door: a taken NEON_EMULATOR_PG_PORT or a HOST that does not resolve stops the start; a taken default port is reported and replaced", async () => {
    const holder = net.createServer();
    const held = await new Promise<number>((resolve) =>
      holder.listen(0, "127.0.0.1", () => resolve((holder.address() as net.AddressInfo).port)),
    );
    const dir = tempDir();
    fs.chmodSync(dir, 0o755);
    try {
      const taken = await run(process.execPath, startArgs(), {
        env: {
          ...process.env,
          PORT: "0",
          NEON_EMULATOR_SEED: "none",
          NEON_EMULATOR_DB: path.join(dir, "a.sqlite"),
          NEON_EMULATOR_COMPUTE: "postgres",
          NEON_EMULATOR_PG_PORT: String(held),
        },
      }).catch((e) => e);
      expect(taken.code).toBe(2);
      expect(taken.stderr).toContain(
        `NEON_EMULATOR_PG_PORT ${held} on 127.0.0.1 cannot be used (EADDRINUSE)`,
      );
    } finally {
      holder.close();
    }
    // A HOST naming no address: said in a line, for the front door and for the API's port.
    for (const [compute, status] of [
      ["postgres", 2],
      ["none", 1],
    ] as const) {
      const nowhere = await run(process.execPath, startArgs(), {
        env: {
          ...process.env,
          PORT: "0",
          HOST: "nowhere.invalid",
          NEON_EMULATOR_SEED: "none",
          NEON_EMULATOR_DB: path.join(dir, `${compute}.sqlite`),
          NEON_EMULATOR_COMPUTE: compute,
          NEON_EMULATOR_PG_PORT: "0",
        },
      }).catch((e) => e);
      expect(nowhere.code).toBe(status);
      expect(nowhere.stderr).toMatch(
        /^HOST nowhere\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\): set HOST/m,
      );
      expect(nowhere.stderr).not.toContain("getaddrinfo");
    }
    // The default port (5432), held here unless something else on the machine already holds it.
    const fallback = net.createServer();
    await new Promise<void>((resolve) => {
      fallback.once("error", () => resolve());
      fallback.listen(5432, "127.0.0.1", () => resolve());
    });
    try {
      const s = await start({
        NEON_EMULATOR_DB: path.join(dir, "b.sqlite"),
        NEON_EMULATOR_COMPUTE: "postgres",
        NEON_EMULATOR_PG_PORT: "",
      });
      expect(s.pgPort).toBeGreaterThan(0);
      expect(s.pgPort).not.toBe(5432);
      expect(s.stdout()).toContain("port 5432 is taken: the Postgres front door listens on");
    } finally {
      fallback.close();
    }
  });

  it("refuses a bad seed file or a revoked NEON_EMULATOR_API_KEY with a short message, and a taken port", async () => {
    const dir = tempDir();
    const seed = path.join(dir, "seed.json");
    fs.writeFileSync(seed, JSON.stringify({ seed: 1 }));
    const env = { ...process.env, NEON_EMULATOR_DB: path.join(dir, "a.sqlite") };
    const bad = await run(process.execPath, startArgs(), { env: { ...env, NEON_EMULATOR_SEED: seed } }).catch(
      (e) => e,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`NEON_EMULATOR_SEED: ${seed} is not a valid seed`);
    // The message only: no uncaught-error report quoting a line of the minified bundle.
    expect(bad.stderr.length).toBeLessThan(500);

    const key = randomKey();
    const s = await start({ NEON_EMULATOR_DB: path.join(dir, "b.sqlite"), NEON_EMULATOR_API_KEY: key });
    const keys = await call(s, key, "GET", "/api/v2/api_keys");
    const own = (keys.body as unknown as { id: number }[])[0]?.id;
    // The key the server runs with cannot be revoked through the API (nor by a reset's revoke_other_keys)…
    const refused = await call(s, key, "DELETE", `/api/v2/api_keys/${own}`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain("NEON_EMULATOR_API_KEY");
    const other = await call(s, key, "POST", "/api/v2/api_keys", { key_name: "other" });
    const reset = await call(s, other.body.key, "POST", "/_emulator/reset", { revoke_other_keys: true });
    expect(reset.status).toBe(200);
    expect((await call(s, key, "GET", "/api/v2/api_keys")).status).toBe(200);
    // …only with the keys CLI, on the database file; then the next start with it is refused.
    await run(process.execPath, [path.resolve("dist/cli/keys.cjs"), "revoke", String(own)], {
      env: { ...env, NEON_EMULATOR_DB: path.join(dir, "b.sqlite") },
    });
    const taken = await run(process.execPath, startArgs(), {
      env: { ...env, PORT: String(s.port), NEON_EMULATOR_SEED: "none" },
    }).catch((e) => e);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`port ${s.port} on 127.0.0.1 is in use`);
    await s.stop("SIGTERM");
    const revoked = await run(process.execPath, startArgs(), {
      env: { ...env, NEON_EMULATOR_DB: path.join(dir, "b.sqlite"), NEON_EMULATOR_API_KEY: key },
    }).catch((e) => e);
    expect(revoked.code).toBe(2);
    expect(revoked.stderr).toContain("NEON_EMULATOR_API_KEY names a key that was revoked");
  });

  it("a second server on the same database file refuses to start; after the first stops or is killed, one starts", async () => {
    const db = path.join(tempDir(), "db.sqlite");
    const env = { NEON_EMULATOR_DB: db, NEON_EMULATOR_API_KEY: randomKey(), NEON_EMULATOR_CLOCK: "manual" };
    const first = await start(env);
    const second = await run(process.execPath, startArgs(), {
      env: { ...process.env, ...env, PORT: "0", NEON_EMULATOR_SEED: "none" },
    }).catch((e) => e);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`another neon-emulator (pid ${first.proc.pid}) already serves ${db}`);
    expect(second.stderr.length).toBeLessThan(300);
    expect(await first.stop("SIGTERM")).toBe(0);
    expect(fs.existsSync(`${db}.server`)).toBe(false);
    const third = await start(env);
    await third.stop("SIGKILL");
    // A claim left by a killed server is taken over.
    expect(fs.existsSync(`${db}.server`)).toBe(true);
    const fourth = await start(env);
    expect((await call(fourth, env.NEON_EMULATOR_API_KEY, "GET", "/_emulator/health")).status).toBe(200);
  });

  it.runIf(process.platform === "linux")(
    "a claim held by a killed server its parent has not reaped yet (a zombie) is taken over",
    () => {
      const db = path.join(tempDir(), "db.sqlite");
      const child = spawn("sleep", ["60"], { stdio: "ignore" });
      try {
        fs.writeFileSync(`${db}.server`, String(child.pid));
        expect(() => claimDatabase(db)).toThrow(DatabaseInUse);
        process.kill(child.pid as number, "SIGKILL");
        // Nothing below yields to the event loop, which would reap it: it is a zombie until then.
        for (let i = 0; i < 1000 && !fs.readFileSync(`/proc/${child.pid}/stat`, "utf8").includes(") Z "); i++)
          execFileSync("sleep", ["0.01"]);
        const release = claimDatabase(db);
        expect(fs.readFileSync(`${db}.server`, "utf8")).toBe(String(process.pid));
        release();
      } finally {
        child.kill("SIGKILL");
      }
    },
  );

  it("resumes an operation in flight after SIGKILL, and the manual clock never goes backwards", async () => {
    const db = path.join(tempDir(), "db.sqlite");
    const key = randomKey();
    const env = {
      NEON_EMULATOR_DB: db,
      NEON_EMULATOR_API_KEY: key,
      NEON_EMULATOR_CLOCK: "manual",
      NEON_EMULATOR_CLOCK_START: "2025-06-01T00:00:00Z",
    };
    let s = await start(env);
    const created = await call(s, key, "POST", "/api/v2/projects", { project: {} });
    const pid = created.body.project.id;
    const eid = created.body.endpoints[0]?.id;
    const adv = await call(s, key, "POST", "/_emulator/clock/advance", { seconds: 0.6 }); // create_timeline done, start_compute running
    expect(adv.body.now).toBe("2025-06-01T00:00:00.600Z");
    await s.stop("SIGKILL");

    s = await start(env);
    expect((await call(s, key, "GET", "/_emulator/clock")).body.now).toBe("2025-06-01T00:00:00.600Z");
    const mid = await call(s, key, "GET", `/api/v2/projects/${pid}/endpoints/${eid}`);
    expect(mid.body.endpoint).toMatchObject({ current_state: "init", pending_state: "active" });
    await call(s, key, "POST", "/_emulator/clock/advance", { seconds: 2 });
    const after = await call(s, key, "GET", `/api/v2/projects/${pid}/endpoints/${eid}`);
    expect(after.body.endpoint).toMatchObject({ current_state: "active" });
    const ops = await call(s, key, "GET", `/api/v2/projects/${pid}/operations`);
    const statuses = ops.body.operations.map(
      (o: { action: string; status: string }) => `${o.action}:${o.status}`,
    );
    expect(statuses).toEqual(["start_compute:finished", "create_timeline:finished"]);
  });

  it("mints, lists and revokes keys against the database file with npm run keys", async () => {
    const db = path.join(tempDir(), "db.sqlite");
    const cli = path.resolve("dist/cli/keys.cjs");
    const env = { ...process.env, NEON_EMULATOR_DB: db };
    const created = await run(process.execPath, [cli, "create", "script"], { env });
    const key = created.stdout.trim();
    expect(key).toMatch(/^[a-z0-9]{64}$/);
    const s = await start({ NEON_EMULATOR_DB: db });
    expect((await call(s, key, "GET", "/api/v2/api_keys")).status).toBe(200);
    const listed = await run(process.execPath, [cli, "list"], { env });
    expect(listed.stdout).toContain('"script"');
    expect(listed.stdout).not.toContain(key);
    const id = (JSON.parse(listed.stdout) as { id: number; name: string }[]).find(
      (k) => k.name === "script",
    )?.id;
    await run(process.execPath, [cli, "revoke", String(id)], { env });
    expect((await call(s, key, "GET", "/api/v2/api_keys")).status).toBe(401);
    const bad = await run(process.execPath, [cli, "create"], { env }).catch((e) => e);
    expect(bad.code).toBe(2);
    // A path where no database is: listed and revoked in nothing, and no empty database made there.
    const missing = path.join(tempDir(), "elsewhere.sqlite");
    for (const args of [["list"], ["revoke", "1"]]) {
      const wrong = await run(process.execPath, [cli, ...args], {
        env: { ...env, NEON_EMULATOR_DB: missing },
      }).catch((e) => e);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(`no database at ${missing}`);
    }
    expect(fs.existsSync(missing)).toBe(false);
  });
});

describe("concurrency", () => {
  it("16 concurrent read_write creates on one branch: exactly one 201, the rest clean 409s", async () => {
    const key = randomKey();
    const s = await start({
      NEON_EMULATOR_DB: path.join(tempDir(), "db.sqlite"),
      NEON_EMULATOR_API_KEY: key,
    });
    const p = await call(s, key, "POST", "/api/v2/projects", { project: {} });
    const pid = p.body.project.id;
    const br = await call(s, key, "POST", `/api/v2/projects/${pid}/branches`, {});
    const bid = br.body.branch.id;
    const results = await Promise.all(
      Array.from({ length: 16 }, () =>
        call(s, key, "POST", `/api/v2/projects/${pid}/endpoints`, {
          endpoint: { branch_id: bid, type: "read_write" },
        }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((x) => x === 201)).toHaveLength(1);
    expect(statuses.filter((x) => x === 409)).toHaveLength(15);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.message).toContain(bid);
    const eps = await call(s, key, "GET", `/api/v2/projects/${pid}/branches/${bid}/endpoints`);
    expect(eps.body.endpoints).toHaveLength(1);
  });
});
