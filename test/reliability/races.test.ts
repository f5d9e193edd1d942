import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Client,
  must,
  type Proc,
  type Reply,
  randomKey,
  SOAK,
  sleep,
  spawnServer,
  tempDir,
} from "./support/server.js";

/**
 * Races against a real server on the wall clock (the worker runs alongside): structural rules
 * hold under concurrent requests, and a revoked key stops working the moment the revoke returns.
 */

let server: Proc;
let c: Client;
const key = randomKey();

beforeAll(async () => {
  server = await spawnServer({
    NEON_EMULATOR_DB: path.join(tempDir(), "races.db"),
    NEON_EMULATOR_API_KEY: key,
    NEON_EMULATOR_LOG_LEVEL: "info",
  });
  c = new Client(server.url, 100);
});
afterAll(async () => {
  c?.close();
  await server?.stop("SIGKILL");
});

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

function summary(rs: Reply[]): string {
  const counts: Record<number, number> = {};
  for (const r of rs) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return JSON.stringify(counts);
}

async function project(): Promise<string> {
  return must(await c.request("POST", "/api/v2/projects", { key, body: { project: {} } }), 201, "project")
    .body.project.id;
}

async function branches(pid: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++)
    out.push(
      must(await c.request("POST", `/api/v2/projects/${pid}/branches`, { key, body: {} }), 201, "branch").body
        .branch.id,
    );
  return out;
}

describe("races on a real server", () => {
  it("1000 concurrent read_write creates over 50 branches: exactly one winner per branch, no 5xx", async () => {
    const pid = await project();
    const bids = await branches(pid, 50);
    const attempts = shuffle(bids.flatMap((bid) => Array.from({ length: 20 }, () => bid)));
    const results = await Promise.all(
      attempts.map(async (bid) => ({
        bid,
        res: await c.request("POST", `/api/v2/projects/${pid}/endpoints`, {
          key,
          body: { endpoint: { branch_id: bid, type: "read_write" } },
        }),
      })),
    );
    const all = results.map((r) => r.res);
    expect(
      all.filter((r) => r.status !== 201 && r.status !== 409),
      summary(all),
    ).toEqual([]);
    for (const bid of bids) {
      const mine = results.filter((r) => r.bid === bid);
      expect(
        mine.filter((r) => r.res.status === 201),
        `winners on ${bid}`,
      ).toHaveLength(1);
      for (const r of mine.filter((x) => x.res.status === 409)) {
        expect(r.res.body.code).toBe("CONFLICT");
        expect(r.res.body.message).toContain(bid);
      }
      const listed = must(
        await c.request("GET", `/api/v2/projects/${pid}/branches/${bid}/endpoints`, { key }),
        200,
      );
      expect(listed.body.endpoints).toHaveLength(1);
      expect(listed.body.endpoints[0].id).toBe(mine.find((r) => r.res.status === 201)?.res.body.endpoint.id);
    }
  }, 180_000);

  it("concurrent PATCH reassignments of many endpoints onto one free branch: exactly one winner", async () => {
    const pid = await project();
    const homes = await branches(pid, 40);
    const eids = new Map<string, string>();
    for (const bid of homes) {
      const e = must(
        await c.request("POST", `/api/v2/projects/${pid}/endpoints`, {
          key,
          body: { endpoint: { branch_id: bid, type: "read_write" } },
        }),
        201,
      );
      eids.set(e.body.endpoint.id, bid);
    }
    for (let round = 0; round < (SOAK ? 10 : 3); round++) {
      const [target] = await branches(pid, 1);
      const results = await Promise.all(
        shuffle([...eids.keys()]).map(async (eid) => ({
          eid,
          res: await c.request("PATCH", `/api/v2/projects/${pid}/endpoints/${eid}`, {
            key,
            body: { endpoint: { branch_id: target } },
          }),
        })),
      );
      const all = results.map((r) => r.res);
      expect(
        all.filter((r) => r.status !== 200 && r.status !== 409),
        summary(all),
      ).toEqual([]);
      const winners = results.filter((r) => r.res.status === 200);
      expect(winners, `round ${round}: ${summary(all)}`).toHaveLength(1);
      const winner = winners[0] as { eid: string };
      const onTarget = must(
        await c.request("GET", `/api/v2/projects/${pid}/branches/${target}/endpoints`, { key }),
        200,
      );
      expect(onTarget.body.endpoints.map((e: { id: string }) => e.id)).toEqual([winner.eid]);
      // The losers stayed where they were.
      const listed = must(await c.request("GET", `/api/v2/projects/${pid}/endpoints`, { key }), 200);
      for (const e of listed.body.endpoints as { id: string; branch_id: string }[]) {
        if (e.id === winner.eid) expect(e.branch_id).toBe(target);
        else if (eids.has(e.id)) expect(e.branch_id, e.id).toBe(eids.get(e.id));
      }
      eids.set(winner.eid, target as string);
    }
  }, 180_000);

  it("a key revoked concurrently with its use never lets a request through once the revoke has returned", async () => {
    const users = new Client(server.url, 32);
    try {
      for (let round = 0; round < (SOAK ? 30 : 6); round++) {
        const k = must(
          await c.request("POST", "/api/v2/api_keys", { key, body: { key_name: `race-${round}` } }),
          200,
        );
        let revokedAt = Number.POSITIVE_INFINITY;
        let stopAt = Number.POSITIVE_INFINITY;
        const seen: { what: string; res: Reply }[] = [];
        const use = async (u: number) => {
          for (let i = 0; performance.now() < stopAt; i++) {
            const kind = (u + i) % 3;
            const res =
              kind === 0
                ? await users.request("GET", "/api/v2/projects", { key: k.body.key })
                : kind === 1
                  ? await users.request("POST", "/api/v2/api_keys", {
                      key: k.body.key,
                      body: { key_name: `by-${round}-${u}-${i}` },
                    })
                  : await users.request("GET", "/api/v2/auth", { key: k.body.key });
            seen.push({ what: ["list projects", "create key", "auth"][kind] as string, res });
          }
        };
        const loops = Array.from({ length: 16 }, (_, u) => use(u));
        // The revoke lands while the key is in use: after some requests have completed (on a busy
        // machine the first ones can take longer than the random delay), at a random moment.
        while (seen.length === 0) await sleep(5);
        await sleep(20 + Math.random() * 150);
        const revoke = must(
          await c.request("DELETE", `/api/v2/api_keys/${k.body.id}`, { key }),
          200,
          "revoke",
        );
        revokedAt = revoke.endedAt;
        stopAt = revokedAt + 150;
        await Promise.all(loops);

        const after = seen.filter((s) => s.res.startedAt > revokedAt);
        const before = seen.filter((s) => s.res.endedAt < revoke.startedAt);
        expect(after.length, `round ${round}: requests started after the revoke returned`).toBeGreaterThan(0);
        expect(before.length, `round ${round}: requests done before the revoke began`).toBeGreaterThan(0);
        const through = after.filter((s) => s.res.status !== 401);
        expect(
          through.map((s) => `${s.what}: HTTP ${s.res.status} ${s.res.text}`),
          `round ${round}: requests that started after the revoke returned`,
        ).toEqual([]);
        for (const s of seen) expect(s.res.status, s.res.text).not.toBeGreaterThanOrEqual(500);
        for (const s of before) expect([200, 201], `${s.what}: ${s.res.text}`).toContain(s.res.status);
      }
    } finally {
      users.close();
    }
  }, 180_000);
});
