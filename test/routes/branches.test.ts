import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ComputeDriver } from "../../src/compute/driver.js";
import { noneDriver } from "../../src/compute/none.js";
import { branches } from "../../src/control-plane/branches/table.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

let t: TestApp;
let projectId: string;
let mainId: string;
beforeEach(async () => {
  t = createTestApp();
  const res = await t.api("POST", "/api/v2/projects", { project: { name: "p" } });
  projectId = res.body.project.id;
  mainId = res.body.branch.id;
});
afterEach(() => t.close());

const base = () => `/api/v2/projects/${projectId}/branches`;

describe("POST /projects/{p}/branches", () => {
  it("creates a branch from the default branch with no body, copying roles and databases", async () => {
    const res = await t.request("POST", base(), undefined, { authorization: `Bearer ${t.key}` });
    expectStatus(res, 201);
    expect(res.body.branch).toMatchObject({ parent_id: mainId, default: false, current_state: "init" });
    expect(res.body.endpoints).toEqual([]);
    expect(res.body.operations.map((o: { action: string }) => o.action)).toEqual(["create_branch"]);
    expect(res.body.roles.map((r: { name: string }) => r.name)).toEqual(["neondb_owner"]);
    expect(res.body.databases.map((d: { name: string }) => d.name)).toEqual(["neondb"]);
  });

  it("accepts an empty body with a JSON content type", async () => {
    expectStatus(
      await t.request("POST", base(), "", {
        authorization: `Bearer ${t.key}`,
        "content-type": "application/json",
      }),
      201,
    );
  });

  it("answers a new branch's connection URI with its first database and that database's owner", async () => {
    const mainId = (await t.api("GET", base())).body.branches[0].id;
    const roles = `${base()}/${mainId}/roles`;
    // A role whose name sorts first, and a database it does not own.
    t.advance(5); // the project's own operations settle
    expectStatus(await t.api("POST", roles, { role: { name: "aaa_readonly" } }), 201);
    t.advance(1);
    expectStatus(
      await t.api("POST", `${base()}/${mainId}/databases`, {
        database: { name: "aaa_db", owner_name: "aaa_readonly" },
      }),
      201,
    );
    t.advance(1);
    const res = await t.api("POST", base(), { branch: { name: "uri" }, endpoints: [{ type: "read_write" }] });
    expectStatus(res, 201);
    const uri = new URL(res.body.connection_uris[0].connection_uri);
    expect([uri.username, uri.pathname]).toEqual(["neondb_owner", "/neondb"]);
    expect(res.body.connection_uris[0].connection_parameters).toMatchObject({
      role: "neondb_owner",
      database: "neondb",
    });
  });

  it("creates endpoints when asked: create_branch plus one start_compute each", async () => {
    const res = await t.api("POST", base(), {
      branch: { name: "dev" },
      endpoints: [{ type: "read_write" }, { type: "read_only" }],
    });
    expectStatus(res, 201);
    expect(res.body.endpoints.map((e: { type: string }) => e.type)).toEqual(["read_write", "read_only"]);
    expect(
      res.body.operations.map((o: { action: string; status: string }) => `${o.action}:${o.status}`),
    ).toEqual(["create_branch:running", "start_compute:running", "start_compute:running"]);
    expect(res.body.connection_uris[0].connection_uri).toContain(res.body.endpoints[0].host);
    t.advance(5);
    const branch = await t.api("GET", `${base()}/${res.body.branch.id}`);
    expect(branch.body.branch.current_state).toBe("ready");
    const eps = await t.api("GET", `${base()}/${res.body.branch.id}/endpoints`);
    expect(eps.body.endpoints.map((e: { current_state: string }) => e.current_state)).toEqual([
      "active",
      "active",
    ]);
  });

  it("branches from a named parent", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    const child = await t.api("POST", base(), { branch: { name: "feature", parent_id: dev.body.branch.id } });
    expectStatus(child, 201);
    expect(child.body.branch.parent_id).toBe(dev.body.branch.id);
  });

  it("rejects an unknown parent (404), a duplicate name (409) and bad endpoint options (400)", async () => {
    expectStatus(await t.api("POST", base(), { branch: { parent_id: "br-nope-00000000" } }), 404);
    await t.api("POST", base(), { branch: { name: "dup" } });
    const dup = await t.api("POST", base(), { branch: { name: "dup" } });
    expectStatus(dup, 409);
    expect(dup.body.message).toContain("dup");
    const bad = await t.api("POST", base(), {
      endpoints: [{ type: "read_write", autoscaling_limit_min_cu: 9 }],
    });
    expectStatus(bad, 400);
    expect(bad.body.message).toContain("autoscaling_limit_min_cu");
    const list = await t.api("GET", base());
    expect(list.body.branches).toHaveLength(2);
  });

  it("init_source schema-only makes a root branch with the source's roles and databases; the source waits until it is made", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    const devId = dev.body.branch.id;
    t.advance(1);
    expectStatus(await t.api("POST", `${base()}/${devId}/roles`, { role: { name: "analyst" } }), 201);
    t.advance(1);
    const res = await t.api("POST", base(), {
      branch: { name: "masked", parent_id: devId, init_source: "schema-only" },
    });
    expectStatus(res, 201);
    expect(res.body.branch).toMatchObject({
      name: "masked",
      init_source: "schema-only",
      current_state: "init",
    });
    for (const field of ["parent_id", "parent_lsn", "parent_timestamp"])
      expect(res.body.branch[field]).toBeUndefined();
    expect(res.body.roles.map((r: { name: string }) => r.name).sort()).toEqual(["analyst", "neondb_owner"]);
    expect(res.body.operations.map((o: { action: string }) => o.action)).toEqual(["create_branch"]);
    // Its data is made from dev's: dev cannot go before that is done.
    expectStatus(await t.api("DELETE", `${base()}/${devId}`), 423);
    t.advance(1);
    const ready = await t.api("GET", `${base()}/${res.body.branch.id}`);
    expect(ready.body.branch).toMatchObject({ current_state: "ready", init_source: "schema-only" });
    expect(ready.body.branch.parent_id).toBeUndefined();
    // Not a child of dev: dev may go now.
    expectStatus(await t.api("DELETE", `${base()}/${devId}`), 200);
    const other = await t.api("POST", base(), { branch: { init_source: "parent-data" } });
    expect(other.body.branch).toMatchObject({ init_source: "parent-data", parent_id: mainId });
    const bad = await t.api("POST", base(), { branch: { init_source: "data-only" } });
    expectStatus(bad, 400);
    expect(bad.body.message).toContain("init_source");
  });

  it("a schema-only branch whose copy failed keeps no one from deleting its source", async () => {
    // A driver whose copy of one branch's data fails, as a real copy can (a full disk).
    let failing = "";
    const driver: ComputeDriver = {
      ...noneDriver,
      inline: false,
      perform: async (effect) => {
        if (effect.kind === "create_branch" && effect.branchId === failing)
          throw new Error("no space left on device");
        return undefined;
      },
    };
    const f = createTestApp({ driver });
    try {
      const project = await f.api("POST", "/api/v2/projects", { project: { name: "q" } });
      const branches = `/api/v2/projects/${project.body.project.id}/branches`;
      const dev = await f.api("POST", branches, { branch: { name: "dev" } });
      f.advance(1);
      await f.worker.drain();
      const masked = await f.api("POST", branches, {
        branch: { name: "masked", parent_id: dev.body.branch.id, init_source: "schema-only" },
      });
      failing = masked.body.branch.id;
      expectStatus(await f.api("DELETE", `${branches}/${dev.body.branch.id}`), 423);
      f.advance(1);
      await f.worker.drain();
      const op = await f.api(
        "GET",
        `/api/v2/projects/${project.body.project.id}/operations/${masked.body.operations[0].id}`,
      );
      expect(op.body.operation).toMatchObject({ status: "failed", error: "no space left on device" });
      expectStatus(await f.api("DELETE", `${branches}/${dev.body.branch.id}`), 200);
    } finally {
      f.close();
    }
  });

  it("takes a parent's LSN, and refuses a time before its history, both at once and a malformed LSN", async () => {
    // What `neon branches create --parent <lsn|timestamp>` sends: the default branch's past.
    const past = await t.api("POST", base(), { branch: { name: "past", parent_lsn: "0/1a2b3c4" } });
    expectStatus(past, 201);
    expect(past.body.branch).toMatchObject({ parent_id: mainId, parent_lsn: "0/1A2B3C4" });
    const early = await t.api("POST", base(), {
      branch: { name: "early", parent_timestamp: "2024-12-31T00:00:00Z" },
    });
    expectStatus(early, 400);
    expect(early.body.message).toContain(
      `parent_timestamp 2024-12-31T00:00:00Z is before branch ${mainId}'s history begins`,
    );
    const malformed = await t.api("POST", base(), { branch: { name: "early", parent_lsn: "0x1A2B3C4" } });
    expectStatus(malformed, 400);
    expect(malformed.body.message).toContain('parent_lsn must be an LSN such as 0/1A2B3C4 (got "0x1A2B3C4")');
    const both = await t.api("POST", base(), {
      branch: { parent_id: mainId, parent_lsn: "0/1A2B3C4", parent_timestamp: "2025-01-01T00:00:00Z" },
    });
    expectStatus(both, 400);
    expect(both.body.message).toContain("cannot be specified at the same time");
    const list = await t.api("GET", base());
    expect(list.body.branches.map((b: { name: string }) => b.name)).not.toContain("early");
    // Any RFC 3339 time, with an offset too (as restore, snapshot and schema take them).
    const now = Math.floor(t.clock.now() / 1000) * 1000;
    const offset = await t.api("POST", base(), {
      branch: {
        name: "offset",
        parent_timestamp: new Date(now + 3_600_000).toISOString().replace("Z", "+01:00"),
      },
    });
    expectStatus(offset, 201);
    expect(Date.parse(offset.body.branch.parent_timestamp)).toBe(now);
  });
});

describe("GET /projects/{p}/branches", () => {
  it("always carries annotations and pages with pagination.next only while more remain", async () => {
    const names = ["a", "b", "c", "d", "e"];
    for (const name of names)
      await t.api("POST", base(), { branch: { name }, annotation_value: { tag: name } });
    const seen: string[] = [];
    let next: string | undefined;
    let pages = 0;
    do {
      const res = await t.api(
        "GET",
        `${base()}?limit=2&sort_by=name&sort_order=asc${next ? `&cursor=${next}` : ""}`,
      );
      expectStatus(res, 200);
      expect(res.body).toHaveProperty("annotations");
      seen.push(...res.body.branches.map((b: { name: string }) => b.name));
      next = res.body.pagination.next;
      pages++;
    } while (next && pages < 10);
    expect(seen).toEqual(["a", "b", "c", "d", "e", "main"]);
    expect(pages).toBe(3);
    const all = await t.api("GET", base());
    const withTag = all.body.branches.find((b: { name: string }) => b.name === "c");
    expect(all.body.annotations[withTag.id].value).toEqual({ tag: "c" });
    expect(all.body.pagination.next).toBeUndefined();
  });

  it("searches by name and sorts descending", async () => {
    await t.api("POST", base(), { branch: { name: "feature-x" } });
    await t.api("POST", base(), { branch: { name: "feature-y" } });
    const res = await t.api("GET", `${base()}?search=feature&sort_by=name&sort_order=desc`);
    expect(res.body.branches.map((b: { name: string }) => b.name)).toEqual(["feature-y", "feature-x"]);
  });

  it("counts the project's branches, all or those matching a search (branches/count is not a branch id)", async () => {
    await t.api("POST", base(), { branch: { name: "feature-x" } });
    await t.api("POST", base(), { branch: { name: "feature-y" } });
    const all = await t.api("GET", `${base()}/count`);
    expectStatus(all, 200);
    const listed = await t.api("GET", base());
    expect(all.body).toEqual({ count: listed.body.branches.length });
    const some = await t.api("GET", `${base()}/count?search=feature`);
    expect(some.body).toEqual({ count: 2 });
    expectStatus(await t.api("GET", `${base()}/count?search=${"x".repeat(300)}`), 400);
    expectStatus(await t.api("GET", "/api/v2/projects/no-such-project/branches/count"), 404);
  });

  it.each(["sort_by=size", "sort_order=up", "limit=0", "cursor=garbage"])(
    "rejects %s with 400",
    async (q) => {
      expectStatus(await t.api("GET", `${base()}?${q}`), 400);
    },
  );
});

describe("PATCH, DELETE, set_as_default", () => {
  it("answers 423 to a change of a branch, or of its roles and databases, while the branch is being created", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    const id = dev.body.branch.id;
    const message =
      "project already has running conflicting operations, scheduling of new ones is prohibited";
    const attempts = [
      await t.api("PATCH", `${base()}/${id}`, { branch: { name: "develop" } }),
      await t.api("POST", `${base()}/${id}/set_as_default`),
      await t.api("DELETE", `${base()}/${id}`),
      await t.api("POST", `${base()}/${id}/roles`, { role: { name: "app" } }),
      await t.api("POST", `${base()}/${id}/databases`, {
        database: { name: "app", owner_name: "neondb_owner" },
      }),
      await t.api("DELETE", `${base()}/${id}/databases/neondb`),
    ];
    for (const res of attempts) {
      expectStatus(res, 423);
      expect(res.body).toEqual({ code: "LOCKED", message, request_id: expect.any(String) });
    }
    // Nothing changed, and reads and other branches are not held up.
    const seen = await t.api("GET", `${base()}/${id}`);
    expect(seen.body.branch).toMatchObject({ name: "dev", default: false });
    expect(
      (await t.api("GET", `${base()}/${id}/roles`)).body.roles.map((r: { name: string }) => r.name),
    ).toEqual(["neondb_owner"]);
    t.advance(1);
    expectStatus(await t.api("POST", `${base()}/${mainId}/roles`, { role: { name: "other" } }), 201);
    // Once create_branch has finished, the same change goes through.
    expectStatus(await t.api("POST", `${base()}/${id}/roles`, { role: { name: "app" } }), 201);
    expectStatus(await t.api("PATCH", `${base()}/${id}`, { branch: { name: "develop" } }), 200);
  });

  it("renames and protects a branch", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    t.advance(1);
    const res = await t.api("PATCH", `${base()}/${dev.body.branch.id}`, {
      branch: { name: "develop", protected: true },
    });
    expectStatus(res, 200);
    expect(res.body.branch).toMatchObject({ name: "develop", protected: true });
    expect((await t.api("GET", `${base()}/${dev.body.branch.id}`)).body.branch.name).toBe("develop");
    expectStatus(await t.api("PATCH", `${base()}/${dev.body.branch.id}`, { branch: { name: "main" } }), 409);
  });

  it("refuses to delete the default branch, a protected branch, or one with children", async () => {
    t.advance(1);
    const def = await t.api("DELETE", `${base()}/${mainId}`);
    expectStatus(def, 409);
    expect(def.body.message).toMatch(/default/);
    const parent = await t.api("POST", base(), { branch: { name: "parent" } });
    await t.api("POST", base(), { branch: { name: "child", parent_id: parent.body.branch.id } });
    t.advance(1);
    const withChild = await t.api("DELETE", `${base()}/${parent.body.branch.id}`);
    expectStatus(withChild, 409);
    expect(withChild.body.message).toMatch(/child/);
    const prot = await t.api("POST", base(), { branch: { name: "prot", protected: true } });
    t.advance(1);
    expectStatus(await t.api("DELETE", `${base()}/${prot.body.branch.id}`), 409);
  });

  it("guards a protected branch as Neon does: no reset or restore, no compute deleted, no project deleted, new passwords below it", async () => {
    const prot = await t.api("POST", base(), {
      branch: { name: "prod", protected: true },
      endpoints: [{ type: "read_write" }],
    });
    t.advance(1);
    const id = prot.body.branch.id;
    const reset = await t.api("POST", `${base()}/${id}/restore`, { source_branch_id: mainId });
    expectStatus(reset, 409);
    expect(reset.body.message).toContain("is protected and cannot be reset or restored");
    const own = await t.api("POST", `${base()}/${id}/restore`, {
      source_branch_id: id,
      source_timestamp: new Date(t.clock.now() - 500).toISOString(),
      preserve_under_name: "prod-before",
    });
    expectStatus(own, 409);
    const endpoint = prot.body.endpoints[0].id;
    const ep = await t.api("DELETE", `/api/v2/projects/${projectId}/endpoints/${endpoint}`);
    expectStatus(ep, 409);
    expect(ep.body.message).toContain(`belongs to protected branch ${id}`);
    const project = await t.api("DELETE", `/api/v2/projects/${projectId}`);
    expectStatus(project, 409);
    expect(project.body.message).toContain(`has protected branch ${id}`);
    // A branch made from it gets passwords of its own; one made from an unprotected branch keeps them.
    const reveal = async (branchId: string) =>
      (await t.api("GET", `${base()}/${branchId}/roles/neondb_owner/reveal_password`)).body.password;
    const child = await t.api("POST", base(), {
      branch: { name: "from-prod", parent_id: id },
      endpoints: [{ type: "read_write" }],
    });
    const sibling = await t.api("POST", base(), { branch: { name: "from-main", parent_id: mainId } });
    t.advance(1);
    expect(await reveal(child.body.branch.id)).not.toBe(await reveal(id));
    expect(child.body.connection_uris[0].connection_uri).toContain(await reveal(child.body.branch.id));
    expect(await reveal(sibling.body.branch.id)).toBe(await reveal(mainId));
    // Unprotected, all of it is allowed again.
    expectStatus(await t.api("PATCH", `${base()}/${id}`, { branch: { protected: false } }), 200);
    expectStatus(await t.api("DELETE", `/api/v2/projects/${projectId}/endpoints/${endpoint}`), 200);
    expectStatus(
      await t.api("POST", `${base()}/${id}/restore`, {
        source_branch_id: mainId,
        preserve_under_name: "prod-old",
      }),
      200,
    );
  });

  it("deletes a branch with its endpoints, roles and databases", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" }, endpoints: [{ type: "read_write" }] });
    const epId = dev.body.endpoints[0].id;
    t.advance(1);
    const res = await t.api("DELETE", `${base()}/${dev.body.branch.id}`);
    expectStatus(res, 200);
    expect(res.body.branch.id).toBe(dev.body.branch.id);
    expectStatus(await t.api("GET", `${base()}/${dev.body.branch.id}`), 404);
    expectStatus(await t.api("GET", `/api/v2/projects/${projectId}/endpoints/${epId}`), 404);
    expectStatus(await t.api("GET", `${base()}/${dev.body.branch.id}/roles`), 404);
  });

  it("sets another branch as default", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    t.advance(1);
    const res = await t.request("POST", `${base()}/${dev.body.branch.id}/set_as_default`, "", {
      authorization: `Bearer ${t.key}`,
      "content-type": "text/plain",
    });
    expectStatus(res, 200);
    expect(res.body.branch.default).toBe(true);
    expect((await t.api("GET", `${base()}/${mainId}`)).body.branch.default).toBe(false);
    // main is no longer refused as the default branch, only as dev's parent.
    const del = await t.api("DELETE", `${base()}/${mainId}`);
    expectStatus(del, 409);
    expect(del.body.message).toMatch(/child/);
  });

  it("404s unknown branches and branches of other projects", async () => {
    const other = await t.api("POST", "/api/v2/projects", { project: {} });
    expectStatus(await t.api("GET", `${base()}/${other.body.branch.id}`), 404);
    expectStatus(await t.api("GET", `${base()}/br-missing-00000000/endpoints`), 404);
  });
});

describe("POST /projects/{p}/branches/{b}/restore", () => {
  const message = (res: { body: { message: string } }) => res.body.message;

  it('an empty preserve_under_name keeps no previous state (Neon\'s "if not empty"); compare_schema names the branch asked about', async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    const devId = dev.body.branch.id;
    t.advance(1);
    const count = async () => (await t.api("GET", base())).body.branches.length;
    const before = await count();
    expectStatus(
      await t.api("POST", `${base()}/${devId}/restore`, {
        source_branch_id: mainId,
        preserve_under_name: "",
      }),
      200,
    );
    expect(await count()).toBe(before);
    // A restore is a reset: the branch says when it was last reset.
    const resetAt = new Date(t.clock.now()).toISOString().replace(".000Z", "Z");
    expect((await t.api("GET", `${base()}/${devId}`)).body.branch.last_reset_at).toBe(resetAt);
    expect((await t.api("GET", `${base()}/${mainId}`)).body.branch).not.toHaveProperty("last_reset_at");
    t.advance(1);
    const diff = await t.api("GET", `${base()}/${devId}/compare_schema?db_name=nope`);
    expectStatus(diff, 404);
    expect(message(diff)).toBe(`database "nope" not found on branch ${devId}`);
  });

  it("resets a branch from its parent: same id, the parent's roles and databases, create_branch until done", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    const devId = dev.body.branch.id;
    t.advance(1);
    expectStatus(await t.api("POST", `${base()}/${devId}/roles`, { role: { name: "dev_only" } }), 201);
    t.advance(1);
    const res = await t.api("POST", `${base()}/${devId}/restore`, { source_branch_id: mainId });
    expectStatus(res, 200);
    expect(res.body.branch).toMatchObject({
      id: devId,
      name: "dev",
      parent_id: mainId,
      current_state: "init",
    });
    expect(
      res.body.operations.map((o: { action: string; branch_id: string }) => [o.action, o.branch_id]),
    ).toEqual([["create_branch", devId]]);
    const roles = await t.api("GET", `${base()}/${devId}/roles`);
    expect(roles.body.roles.map((r: { name: string }) => r.name)).toEqual(["neondb_owner"]);
    // A change while the restore runs meets a 423, and so do a branch made from it and the
    // project's deletion (a recovery would bring back a branch naming its new parent with its old
    // data, the restore's operation gone with the deletion); once done, the branch is ready again.
    expectStatus(await t.api("POST", `${base()}/${devId}/roles`, { role: { name: "early" } }), 423);
    expectStatus(await t.api("POST", base(), { branch: { parent_id: devId } }), 423);
    expectStatus(await t.api("DELETE", `/api/v2/projects/${projectId}`), 423);
    t.advance(1);
    expect((await t.api("GET", `${base()}/${devId}`)).body.branch.current_state).toBe("ready");
    // The branch list shows no new branch.
    expect((await t.api("GET", base())).body.branches).toHaveLength(2);
  });

  it("keeps the previous state under preserve_under_name, which takes the branch's children", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    const devId = dev.body.branch.id;
    t.advance(1);
    const child = await t.api("POST", base(), { branch: { name: "feature", parent_id: devId } });
    expectStatus(await t.api("POST", `${base()}/${devId}/roles`, { role: { name: "dev_only" } }), 201);
    t.advance(1);
    const refused = await t.api("POST", `${base()}/${devId}/restore`, { source_branch_id: mainId });
    expectStatus(refused, 400);
    expect(message(refused)).toContain("preserve_under_name is required");
    const res = await t.api("POST", `${base()}/${devId}/restore`, {
      source_branch_id: mainId,
      preserve_under_name: "dev_old",
    });
    expectStatus(res, 200);
    expect(res.body.operations.map((o: { action: string }) => o.action)).toEqual([
      "create_branch",
      "create_branch",
    ]);
    t.advance(1);
    const list = (await t.api("GET", base())).body.branches as {
      id: string;
      name: string;
      parent_id?: string;
    }[];
    const kept = list.find((b) => b.name === "dev_old");
    expect(kept).toMatchObject({ parent_id: mainId });
    expect(list.find((b) => b.id === child.body.branch.id)?.parent_id).toBe(kept?.id);
    const keptRoles = await t.api("GET", `${base()}/${kept?.id}/roles`);
    expect(keptRoles.body.roles.map((r: { name: string }) => r.name).sort()).toEqual([
      "dev_only",
      "neondb_owner",
    ]);
    const again = await t.api("POST", `${base()}/${devId}/restore`, {
      source_branch_id: mainId,
      preserve_under_name: "dev_old",
    });
    expectStatus(again, 409);
  });

  it("refuses a time before the source's history, itself without a point or a name to keep, unknown sources and bad bodies", async () => {
    const dev = await t.api("POST", base(), { branch: { name: "dev" } });
    const devId = dev.body.branch.id;
    t.advance(1);
    const pitr = await t.api("POST", `${base()}/${devId}/restore`, {
      source_branch_id: mainId,
      source_timestamp: "2024-12-31T00:00:00Z",
    });
    expectStatus(pitr, 400);
    expect(message(pitr)).toContain("is before branch");
    const self = await t.api("POST", `${base()}/${devId}/restore`, { source_branch_id: devId });
    expectStatus(self, 400);
    expect(message(self)).toContain("source_lsn or source_timestamp");
    const unkept = await t.api("POST", `${base()}/${devId}/restore`, {
      source_branch_id: devId,
      source_lsn: "0/1A2B3C4",
    });
    expectStatus(unkept, 400);
    expect(message(unkept)).toContain("needs preserve_under_name");
    const notTime = await t.api("POST", `${base()}/${devId}/restore`, {
      source_branch_id: mainId,
      source_timestamp: "yesterday",
    });
    expectStatus(notTime, 400);
    expect(message(notTime)).toContain(
      'source_timestamp must be a timestamp such as 2024-02-26T12:00:00Z (got "yesterday")',
    );
    expectStatus(
      await t.api("POST", `${base()}/${devId}/restore`, { source_branch_id: "br-nope-123456" }),
      404,
    );
    expectStatus(await t.api("POST", `${base()}/${devId}/restore`, {}), 400);
    expectStatus(await t.api("POST", `${base()}/br-nope-123456/restore`, { source_branch_id: mainId }), 404);
    // Nothing changed.
    expect((await t.api("GET", `${base()}/${devId}`)).body.branch).toMatchObject({
      parent_id: mainId,
      current_state: "ready",
    });
  });
});

describe("branch expiry", () => {
  it("deletes a branch when its expires_at passes, its endpoint with it", async () => {
    const discarded: string[] = [];
    const driver: ComputeDriver = {
      ...noneDriver,
      discard: async (event) => {
        if (event.type === "branch_deleted") discarded.push(event.branchId);
      },
    };
    const f = createTestApp({ driver });
    try {
      const project = await f.api("POST", "/api/v2/projects", { project: { name: "q" } });
      const branches = `/api/v2/projects/${project.body.project.id}/branches`;
      const at = new Date(f.clock.now() + 60_000).toISOString();
      const ttl = await f.api("POST", branches, {
        branch: { name: "ttl", expires_at: at },
        endpoints: [{ type: "read_write" }],
      });
      expectStatus(ttl, 201);
      // The worker wakes at the expiry (a manual advance stops there).
      expect(f.worker.nextEventAt(f.accountId)).toBeLessThanOrEqual(Date.parse(at));
      f.advance(59);
      expectStatus(await f.api("GET", `${branches}/${ttl.body.branch.id}`), 200);
      f.advance(1);
      expectStatus(await f.api("GET", `${branches}/${ttl.body.branch.id}`), 404);
      expectStatus(
        await f.api(
          "GET",
          `/api/v2/projects/${project.body.project.id}/endpoints/${ttl.body.endpoints[0].id}`,
        ),
        404,
      );
      expect(discarded).toEqual([ttl.body.branch.id]);
    } finally {
      f.close();
    }
  });

  it("refuses what Neon refuses of expiring branches, writing nothing: more than 30 days ahead, an expiry on a protected or default branch or a parent, a branch made of an expiring one; keeps it to the second", async () => {
    const main = (await t.api("GET", base())).body.branches.find((b: { default: boolean }) => b.default);
    const ahead = (ms: number) => new Date(t.clock.now() + ms).toISOString();
    const refused = async (method: string, path: string, body: unknown, message: RegExp) => {
      const res = await t.api(method, path, body);
      expectStatus(res, 400);
      expect(res.body.message).toMatch(message);
    };
    const count = async () => (await t.api("GET", base())).body.branches.length;
    const before = await count();
    await refused(
      "POST",
      base(),
      { branch: { name: "far", expires_at: ahead(31 * 86400_000) } },
      /at most 30 days/,
    );
    await refused(
      "POST",
      base(),
      { branch: { name: "guarded", protected: true, expires_at: ahead(3600_000) } },
      /would be protected and expire/,
    );
    expect(await count()).toBe(before);
    const asked = t.clock.now() + 3600_789;
    const expiring = await t.api("POST", base(), {
      branch: { name: "expiring", expires_at: new Date(asked).toISOString() },
    });
    expectStatus(expiring, 201);
    expect(expiring.body.branch.expires_at).toBe(
      new Date(Math.floor(asked / 1000) * 1000).toISOString().replace(".000Z", "Z"),
    );
    t.advance(1);
    const id = expiring.body.branch.id;
    await refused(
      "POST",
      base(),
      { branch: { name: "child", parent_id: id } },
      /no branch can be made from an expiring branch/,
    );
    await refused(
      "PATCH",
      `${base()}/${id}`,
      { branch: { protected: true } },
      /would be protected and expire/,
    );
    // A restore from it, or a snapshot restored onto it, would make it a parent too.
    const other = await t.api("POST", base(), { branch: { name: "other" } });
    t.advance(1);
    await refused(
      "POST",
      `${base()}/${other.body.branch.id}/restore`,
      { source_branch_id: id },
      /no branch can be made from an expiring branch/,
    );
    const snapshot = await t.api("POST", `${base()}/${main.id}/snapshot`);
    expectStatus(snapshot, 200);
    t.advance(1);
    await refused(
      "POST",
      `/api/v2/projects/${projectId}/snapshots/${snapshot.body.snapshot.id}/restore`,
      { target_branch_id: id },
      /no branch can be made from an expiring branch/,
    );
    await refused(
      "POST",
      `${base()}/${id}/set_as_default`,
      undefined,
      /would be the default branch and expire/,
    );
    await refused(
      "PATCH",
      `${base()}/${main.id}`,
      { branch: { expires_at: ahead(3600_000) } },
      /would be the default branch/,
    );
    const parent = await t.api("POST", base(), { branch: { name: "parent" } });
    const child = await t.api("POST", base(), {
      branch: { name: "child-of-parent", parent_id: parent.body.branch.id },
    });
    expectStatus(child, 201);
    t.advance(1);
    await refused(
      "PATCH",
      `${base()}/${parent.body.branch.id}`,
      { branch: { expires_at: ahead(3600_000) } },
      new RegExp(`would expire with a child branch \\(${child.body.branch.id}\\)`),
    );
    const after = await t.api("GET", `${base()}/${id}`);
    expect(after.body.branch).toMatchObject({ protected: false, default: false });
    expect((await t.api("GET", `${base()}/${parent.body.branch.id}`)).body.branch).not.toHaveProperty(
      "expires_at",
    );
    // Its expiry gone, it may be protected, made default and branched from again.
    expectStatus(await t.api("PATCH", `${base()}/${id}`, { branch: { expires_at: null } }), 200);
    expectStatus(await t.api("PATCH", `${base()}/${id}`, { branch: { protected: true } }), 200);
  });

  it("shows the time to live an expiry gave (ttl_interval_seconds), and a reset from the parent counts it again from then", async () => {
    const mainId = (await t.api("GET", base())).body.branches.find((b: { default: boolean }) => b.default).id;
    const made = await t.api("POST", base(), {
      branch: {
        name: "ttl-reset",
        parent_id: mainId,
        expires_at: new Date(t.clock.now() + 3600_000).toISOString(),
      },
    });
    expectStatus(made, 201);
    expect(made.body.branch.ttl_interval_seconds).toBe(3600);
    const id = made.body.branch.id;
    t.advance(1);
    // A new expiry sets a new time to live; a PATCH without one keeps it.
    const patched = await t.api("PATCH", `${base()}/${id}`, {
      branch: { expires_at: new Date(t.clock.now() + 7200_000).toISOString() },
    });
    expect(patched.body.branch.ttl_interval_seconds).toBe(7200);
    t.advance(600);
    expect(
      (await t.api("PATCH", `${base()}/${id}`, { branch: { name: "ttl-reset-2" } })).body.branch
        .ttl_interval_seconds,
    ).toBe(7200);
    // Reset from the parent: 7200 s from now again. A restore from another branch keeps the expiry.
    const reset = await t.api("POST", `${base()}/${id}/restore`, { source_branch_id: mainId });
    expectStatus(reset, 200);
    expect(Date.parse(reset.body.branch.expires_at)).toBe(t.clock.now() + 7200_000);
    t.advance(1);
    const other = await t.api("POST", base(), { branch: { name: "ttl-other" } });
    t.advance(1);
    const before = (await t.api("GET", `${base()}/${id}`)).body.branch.expires_at;
    expectStatus(
      await t.api("POST", `${base()}/${id}/restore`, { source_branch_id: other.body.branch.id }),
      200,
    );
    t.advance(1);
    expect((await t.api("GET", `${base()}/${id}`)).body.branch.expires_at).toBe(before);
    // No expiry, no time to live.
    const cleared = await t.api("PATCH", `${base()}/${id}`, { branch: { expires_at: null } });
    expect(cleared.body.branch).not.toHaveProperty("expires_at");
    expect(cleared.body.branch).not.toHaveProperty("ttl_interval_seconds");
  });

  it("goes for a branch whose create failed; branches that must wait hold no others back", async () => {
    const soon = (s: number) => new Date(t.clock.now() + s * 1000).toISOString();
    expectStatus(await t.api("POST", "/_emulator/faults", { action: "create_branch", count: 1 }), 201);
    const failed = await t.api("POST", base(), { branch: { name: "failed", expires_at: soon(60) } });
    expectStatus(failed, 201);
    t.advance(1);
    expect((await t.api("GET", `${base()}/${failed.body.branch.id}`)).body.branch.current_state).toBe("init");
    // More protected ones expiring first than the worker takes in one pass (100): rows an earlier
    // emulator kept (the API now refuses to protect an expiring branch).
    for (let i = 0; i < 101; i++) {
      const guarded = await t.api("POST", base(), { branch: { name: `guarded-${i}`, expires_at: soon(60) } });
      expectStatus(guarded, 201);
      t.ctx.db.update(branches).set({ protected: true }).where(eq(branches.id, guarded.body.branch.id)).run();
    }
    const plain = await t.api("POST", base(), { branch: { name: "plain", expires_at: soon(120) } });
    expectStatus(plain, 201);
    t.advance(600);
    expectStatus(await t.api("GET", `${base()}/${failed.body.branch.id}`), 404);
    expectStatus(await t.api("GET", `${base()}/${plain.body.branch.id}`), 404);
    const left = await t.api("GET", `${base()}?limit=1000`);
    expect(left.body.branches.filter((b: { name: string }) => b.name.startsWith("guarded-"))).toHaveLength(
      101,
    );
  });
});
