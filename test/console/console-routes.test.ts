import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSignInToken, signInLink } from "../../src/console/sessions.js";
import { bucketPeaks } from "../../src/console/views/charts.js";
import { ensureDefaultAccount } from "../../src/control-plane/accounts/service.js";
import { recordClientConnection } from "../../src/control-plane/endpoints/service.js";
import { connectionOf } from "../../src/platform/statements.js";
import { createTestApp, expectStatus, type TestApp } from "../helpers/app.js";

/**
 * The console's pages in-process: sessions and sign-in links, CSRF and origin checks, bad form
 * input (the API's own validation, nothing half-written), other accounts' objects, confirmation
 * without the script, and the monitoring records.
 */

let t: TestApp;
beforeEach(() => {
  t = createTestApp();
});
afterEach(() => t.close());

const ORIGIN = "http://localhost";

interface Browser {
  cookie: string;
  csrf: string;
  get(path: string): ReturnType<TestApp["request"]>;
  post(
    path: string,
    form: Record<string, string>,
    headers?: Record<string, string>,
  ): ReturnType<TestApp["request"]>;
}

/** Signs in as `accountId` with a fresh link, as a browser would, and reads the CSRF token of a page. */
async function signIn(accountId = t.accountId): Promise<Browser> {
  const { url } = signInLink(t.ctx.db, accountId, ORIGIN, Date.now());
  const res = await t.request("GET", url.slice(ORIGIN.length));
  expect(res.status).toBe(303);
  const setCookie = res.headers.get("set-cookie") ?? "";
  expect(setCookie).toMatch(/HttpOnly/);
  expect(setCookie).toMatch(/SameSite=Strict/);
  const cookie = setCookie.split(";")[0] as string;
  const page = await t.request("GET", "/app/projects", undefined, { cookie });
  expectStatus(page, 200);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
  expect(csrf.length).toBeGreaterThan(20);
  const browser: Browser = {
    cookie,
    csrf,
    get: (path) => t.request("GET", path, undefined, { cookie }),
    post: (path, form, headers = {}) =>
      t.request("POST", path, new URLSearchParams({ _csrf: csrf, ...form }).toString(), {
        cookie,
        "content-type": "application/x-www-form-urlencoded",
        origin: ORIGIN,
        ...headers,
      }),
  };
  return browser;
}

async function project(name = "p"): Promise<{ id: string; branchId: string; endpointId: string }> {
  const res = await t.api("POST", "/api/v2/projects", { project: { name } });
  expectStatus(res, 201);
  t.advance(5);
  return { id: res.body.project.id, branchId: res.body.branch.id, endpointId: res.body.endpoints[0].id };
}

const sqlite = () => connectionOf(t.ctx.db) as Database.Database;
const count = (table: string) =>
  (sqlite().prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("sessions", () => {
  it("nothing answers without a session: pages send the browser to sign in, posts are refused", async () => {
    const page = await t.request("GET", "/app/projects");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/app/sign-in");
    const forged = await t.request("GET", "/app/projects", undefined, { cookie: "neon_console=forged" });
    expect(forged.status).toBe(303);
    const post = await t.request("POST", "/app/projects", "name=x", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(post.status).toBe(401);
    expect(count("projects")).toBe(0);
  });

  it("every answer forbids framing and loads only the console's own script and stylesheet", async () => {
    const b = await signIn();
    for (const res of [await t.request("GET", "/app/sign-in"), await b.get("/app/projects")]) {
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("form-action 'self'");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      // Nothing inline for the policy to refuse: scripts and styles come from /app/assets.
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)|\sstyle="|\son[a-z]+="/);
    }
  });

  it("every page names its icon, and it is there without a session", async () => {
    const b = await signIn();
    for (const res of [await t.request("GET", "/app/sign-in"), await b.get("/app/projects")]) {
      const href = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml"\/>/.exec(res.text)?.[1];
      expect(href).toBe("/app/assets/icon.svg");
    }
    const icon = await t.request("GET", "/app/assets/icon.svg");
    expectStatus(icon, 200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(icon.text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[\s\S]*<\/svg>$/);
  });

  it("a sign-in link works once and not after a day", async () => {
    const token = createSignInToken(t.ctx.db, t.accountId, Date.now());
    expect((await t.request("GET", `/app/sign-in?token=${token}`)).status).toBe(303);
    expect((await t.request("GET", `/app/sign-in?token=${token}`)).status).toBe(401);
    const old = createSignInToken(t.ctx.db, t.accountId, Date.now() - 25 * 3_600_000);
    expect((await t.request("GET", `/app/sign-in?token=${old}`)).status).toBe(401);
    expect((await t.request("GET", "/app/sign-in?token=nonsense")).status).toBe(401);
    // Only hashes are stored.
    const rows = sqlite().prepare("SELECT token_hash FROM console_sign_in_tokens").all() as {
      token_hash: string;
    }[];
    expect(rows.some((r) => r.token_hash === old)).toBe(false);
  });

  it("a key scoped to one project cannot make a console link", async () => {
    const p = await project();
    const scoped = await t.api(
      "POST",
      `/api/v2/organizations/${ensureDefaultAccount(t.ctx).orgId}/api_keys`,
      {
        key_name: "scoped",
        project_id: p.id,
      },
    );
    if (scoped.status !== 200) throw new Error(scoped.text);
    const res = await t.request("POST", "/_emulator/console/sign-in-link", undefined, {
      authorization: `Bearer ${scoped.body.key}`,
    });
    expect(res.status).toBe(403);
    const own = await t.api("POST", "/_emulator/console/sign-in-link");
    expectStatus(own, 200);
    expect(own.body.url).toMatch(/^http:\/\/localhost\/app\/sign-in\?token=[\w-]{43}$/);
  });

  it("sign-out ends the session", async () => {
    const b = await signIn();
    expect((await b.post("/app/sign-out", {})).status).toBe(303);
    expect((await b.get("/app/projects")).status).toBe(303);
  });

  it("no cache keeps a signed-in page (a password shown, a key just made): Back after sign-out shows none; the assets are cached", async () => {
    const b = await signIn();
    const project = await t.api("POST", "/api/v2/projects", { project: {} });
    const pid = project.body.project.id;
    for (const res of [
      await b.get("/app/projects"),
      await b.get(`/app/projects/${pid}`),
      await b.post("/app/settings/api-keys", { key_name: "shown-once" }),
    ]) {
      expect(res.status, res.text).toBeLessThan(400);
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
    expect((await t.request("GET", "/app/assets/console.css")).headers.get("cache-control")).toBe(
      "public, max-age=3600",
    );
  });
});

describe("addresses", () => {
  it("a form's address opened as a page gets a console page (405, Allow), not the API's JSON; the branches crumb leads to the project", async () => {
    const b = await signIn();
    const project = await t.api("POST", "/api/v2/projects", { project: {} });
    const pid = project.body.project.id;
    const branches = await b.get(`/app/projects/${pid}/branches`);
    expect(branches.status).toBe(303);
    expect(branches.headers.get("location")).toBe(`/app/projects/${pid}`);
    const signOut = await b.get("/app/sign-out");
    expect(signOut.status).toBe(405);
    expect(signOut.headers.get("allow")).toBe("POST");
    expect(signOut.headers.get("content-type")).toMatch(/^text\/html/);
    expect(signOut.text).toContain("is where a form is sent, not a page to open");
    // The API keeps its JSON.
    const api = await t.api("PUT", `/api/v2/projects/${pid}/branches`);
    expect(api.status).toBe(405);
    expect(api.body.code).toBe("METHOD_NOT_ALLOWED");
  });

  it("a name of spaces only shows its id, so the project and the branch can still be opened", async () => {
    const b = await signIn();
    const { id: pid, branchId: bid } = await project("   ");
    expectStatus(
      await t.api("PATCH", `/api/v2/projects/${pid}/branches/${bid}`, { branch: { name: "  " } }),
      200,
    );
    const list = await b.get("/app/projects");
    expect(list.text).toContain(`<a href="/app/projects/${pid}">${pid}</a>`);
    const page = await b.get(`/app/projects/${pid}`);
    expect(page.text).toContain(`<h1>${pid}</h1>`);
    expect(page.text).toContain(`<a href="/app/projects/${pid}/branches/${bid}">${bid}</a>`);
  });
});

describe("forms", () => {
  it("a post without the session's CSRF token, or from another origin, is refused and changes nothing", async () => {
    const b = await signIn();
    const form = "key_name=x";
    const headers = { cookie: b.cookie, "content-type": "application/x-www-form-urlencoded" };
    expect((await t.request("POST", "/app/settings/api-keys", form, headers)).status).toBe(403);
    expect((await t.request("POST", "/app/settings/api-keys", `${form}&_csrf=wrong`, headers)).status).toBe(
      403,
    );
    expect(
      (await b.post("/app/settings/api-keys", { key_name: "x" }, { origin: "http://evil.example" })).status,
    ).toBe(403);
    expect(
      (await b.post("/app/settings/api-keys", { key_name: "x" }, { "sec-fetch-site": "cross-site" })).status,
    ).toBe(403);
    const keys = await t.api("GET", "/api/v2/api_keys");
    expect(keys.body.map((k: { name: string }) => k.name)).toEqual(["test"]);
    // The same form, right: the key is made and shown once.
    const ok = await b.post("/app/settings/api-keys", { key_name: "x" });
    expectStatus(ok, 200);
    expect(ok.text).toMatch(/id="created-key">[a-z0-9]{64}</);
  });

  it("bad input gets the API's message, with nothing written", async () => {
    const b = await signIn();
    const bad = await b.post("/app/projects", { name: "p", min_cu: "abc", max_cu: "1" });
    expect(bad.status).toBe(400);
    // The field as the form labels it, not the API's path to it.
    expect(bad.text).toContain("Check the form. Minimum compute size:");
    expect(bad.text).not.toContain("autoscaling_limit_min_cu");
    // From a console page, the refusal goes back to it with the reason.
    const back = await b.post(
      "/app/projects",
      { name: "p", min_cu: "4", max_cu: "1" },
      { referer: `${ORIGIN}/app/projects` },
    );
    expect(back.status).toBe(303);
    expect(decodeURIComponent(back.headers.get("location") ?? "")).toMatch(/^\/app\/projects\?error=.+/);
    // The service's own message, its API fields named as the form labels them.
    const said = new URL(back.headers.get("location") ?? "", ORIGIN).searchParams.get("error") ?? "";
    expect(said).toContain("Minimum compute size");
    expect(said).toContain("Maximum compute size");
    expect(said).toBe("Compute defaults: Minimum compute size (4) must not exceed Maximum compute size (1)");
    expect(count("projects")).toBe(0);
    const big = await b.post("/app/projects", { name: "x".repeat(70_000) });
    expect(big.status).toBe(413);
    expect(count("projects")).toBe(0);
  });

  it("a key id is read as the API reads it: only a canonical positive integer names a key", async () => {
    const b = await signIn();
    const keyId = (await t.api("GET", "/api/v2/api_keys")).body[0].id as number;
    for (const spelled of [`0x${keyId.toString(16)}`, `+${keyId}`, `${keyId}e0`, `0${keyId}`, "-1"]) {
      const res = await b.post(`/app/settings/api-keys/${encodeURIComponent(spelled)}/revoke`, {
        confirm: "yes",
      });
      expect(res.status, spelled).toBe(404);
    }
    expectStatus(await t.api("GET", "/api/v2/api_keys"), 200);
  });

  it("a project is renamed and deleted from its page (asked first; a protected branch refuses it, nothing changed); it is recovered from the projects page, or by the API", async () => {
    const p = await project("before");
    const b = await signIn();
    const page = await b.get(`/app/projects/${p.id}`);
    expect(page.text).toContain(`action="/app/projects/${p.id}/rename"`);
    expect(page.text).toContain(`action="/app/projects/${p.id}/delete"`);
    const renamed = await b.post(`/app/projects/${p.id}/rename`, { name: "after" });
    expect(renamed.status).toBe(303);
    expect((await t.api("GET", `/api/v2/projects/${p.id}`)).body.project.name).toBe("after");
    expect((await b.post(`/app/projects/${p.id}/rename`, { name: "x".repeat(257) })).status).toBe(400);
    expect((await t.api("GET", `/api/v2/projects/${p.id}`)).body.project.name).toBe("after");
    const path = `/app/projects/${p.id}/delete`;
    expect((await b.post(path, {})).text).toContain("Are you sure?");
    expectStatus(await t.api("GET", `/api/v2/projects/${p.id}`), 200);
    const protect = async (on: boolean) =>
      expectStatus(
        await t.api("PATCH", `/api/v2/projects/${p.id}/branches/${p.branchId}`, {
          branch: { protected: on },
        }),
        200,
      );
    await protect(true);
    const refused = await b.post(path, { confirm: "yes" });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain("protected branch");
    expectStatus(await t.api("GET", `/api/v2/projects/${p.id}`), 200);
    await protect(false);
    const done = await b.post(path, { confirm: "yes" });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toMatch(/^\/app\/projects\?notice=/);
    expect((await t.api("GET", `/api/v2/projects/${p.id}`)).status).toBe(404);
    expect((await b.get(`/app/projects/${p.id}`)).status).toBe(404);
    // Listed as recently deleted on the projects page, with Recover.
    const list = (await b.get("/app/projects")).text;
    expect(list).toContain("Recently deleted (1)");
    expect(list).toContain(`<tr data-deleted-project="${p.id}">`);
    const recovered = await b.post(`/app/projects/${p.id}/recover`, {});
    expect(recovered.status).toBe(303);
    expect(recovered.headers.get("location")).toMatch(new RegExp(`^/app/projects/${p.id}\\?notice=`));
    expect((await t.api("GET", `/api/v2/projects/${p.id}`)).body.project.name).toBe("after");
    expect((await b.get("/app/projects")).text).not.toContain("Recently deleted");
    // Deleted again, the API recovers it as well; a project that is not deleted is not recovered.
    expect((await b.post(path, { confirm: "yes" })).status).toBe(303);
    expectStatus(await t.api("POST", `/api/v2/projects/${p.id}/recover`), 200);
    expect((await t.api("GET", `/api/v2/projects/${p.id}`)).body.project.name).toBe("after");
    expect((await b.post(`/app/projects/${p.id}/recover`, {})).status).toBe(409);
  });

  it("a form sent again (a reload of the page its POST answered) is refused, not done twice: no second key, no second password reset; a question asked does not use it up", async () => {
    const p = await project();
    const b = await signIn();
    // Every form carries a token of its own.
    const forms = (await b.get("/app/settings/api-keys")).text;
    expect(forms).toMatch(/name="_once" value="[\w-]{16}"/);
    const create = { key_name: "sent-once", _once: "form-1" };
    expectStatus(await b.post("/app/settings/api-keys", create), 200);
    const again = await b.post("/app/settings/api-keys", create);
    expect(again.status).toBe(409);
    expect(again.text).toContain("This form was sent already");
    const keys = (await t.api("GET", "/api/v2/api_keys")).body as { name: string }[];
    expect(keys.filter((k) => k.name === "sent-once")).toHaveLength(1);
    // A reset asks first (no script): the question does not use up the token; the reset does.
    const base = `/app/projects/${p.id}/branches/${p.branchId}`;
    const role = (await t.api("GET", `/api/v2/projects/${p.id}/branches/${p.branchId}/roles`)).body.roles[0]
      .name;
    const reset = { name: role, _once: "form-2" };
    expect((await b.post(`${base}/roles/reset`, reset)).text).toContain("Are you sure?");
    const done = await b.post(`${base}/roles/reset`, { ...reset, confirm: "yes" });
    expectStatus(done, 200);
    const shown = /npg_[a-z0-9]+/.exec(done.text)?.[0];
    expect(shown).toBeDefined();
    expect((await b.post(`${base}/roles/reset`, { ...reset, confirm: "yes" })).status).toBe(409);
    const revealed = await t.api(
      "GET",
      `/api/v2/projects/${p.id}/branches/${p.branchId}/roles/${role}/reveal_password`,
    );
    expect(revealed.body.password).toBe(shown);
    // A form without the token (a script's) is done as before.
    expectStatus(await b.post("/app/settings/api-keys", { key_name: "scripted" }), 200);
    expectStatus(await b.post("/app/settings/api-keys", { key_name: "scripted" }), 200);
  });

  it("acts on the role it lists, whatever line breaks its name holds (which browsers change in what forms carry)", async () => {
    const p = await project();
    const b = await signIn();
    const api = `/api/v2/projects/${p.id}/branches/${p.branchId}`;
    const passwords: Record<string, string> = {};
    for (const name of ["dup\nx", "dup\r\nx", "cr\rx"]) {
      const made = await t.api("POST", `${api}/roles`, { role: { name } });
      expectStatus(made, 201);
      passwords[name] = made.body.role.password;
      t.advance(5);
    }
    const base = `/app/projects/${p.id}/branches/${p.branchId}`;
    const page = (await b.get(`${base}?tab=roles`)).text;
    // An attribute's text, and what a browser sends of a hidden field: the attribute as it reads it
    // (CR and CRLF become LF), then every line break sent as CRLF.
    const text = (attribute: string) =>
      attribute
        .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&");
    const sent = (attribute: string) => text(attribute.replace(/\r\n?/g, "\n")).replace(/\r?\n|\r/g, "\r\n");
    // Each row's role (as the page holds it) and the name its reveal form sends.
    const rows = page.split('<tr data-role="').slice(1);
    const sends = new Map(
      rows.map((row) => [
        text(row.slice(0, row.indexOf('"'))),
        sent(/action="[^"]*\/roles\/reveal"[\s\S]*?name="name" value="([^"]*)"/.exec(row)?.[1] ?? ""),
      ]),
    );
    for (const [name, password] of Object.entries(passwords)) {
      const shown = await b.post(`${base}/roles/reveal`, { name: sends.get(name) ?? "" });
      expectStatus(shown, 200);
      expect(shown.text, JSON.stringify(name)).toContain(password);
    }
  });

  it("the SQL editor and Connect open on a branch with a compute when the default branch has none", async () => {
    const p = await project();
    const bare = await t.api("POST", `/api/v2/projects/${p.id}/branches`, { branch: { name: "no-compute" } });
    t.advance(5);
    expectStatus(
      await t.api("POST", `/api/v2/projects/${p.id}/branches/${bare.body.branch.id}/set_as_default`),
      200,
    );
    const b = await signIn();
    for (const path of [`/app/projects/${p.id}/sql`, `/app/projects/${p.id}`]) {
      const page = await b.get(path);
      expectStatus(page, 200);
      expect(page.text, path).toMatch(new RegExp(`<option value="${p.branchId}" selected`));
    }
    // Asked for, the branch without one is still chosen.
    const asked = await b.get(`/app/projects/${p.id}/sql?branch_id=${bare.body.branch.id}`);
    expect(asked.text).toMatch(new RegExp(`<option value="${bare.body.branch.id}" selected`));
  });

  it("offers only what can be done: no Delete on the default branch; Suspend for a running compute, Start for one that is not", async () => {
    const p = await project();
    const b = await signIn();
    const main = await b.get(`/app/projects/${p.id}/branches/${p.branchId}`);
    expect(main.text).not.toContain(`/branches/${p.branchId}/delete"`);
    const computes = `/computes/${p.endpointId}`;
    expect(main.text).toContain(`${computes}/suspend"`);
    expect(main.text).not.toContain(`${computes}/start"`);
    expectStatus(await t.api("POST", `/api/v2/projects/${p.id}/endpoints/${p.endpointId}/suspend`), 200);
    t.advance(5);
    const idle = await b.get(`/app/projects/${p.id}/branches/${p.branchId}`);
    expect(idle.text).toContain(`${computes}/start"`);
    expect(idle.text).not.toContain(`${computes}/suspend"`);
    const child = await t.api("POST", `/api/v2/projects/${p.id}/branches`, { branch: { name: "child" } });
    t.advance(5);
    const childPage = await b.get(`/app/projects/${p.id}/branches/${child.body.branch.id}`);
    expect(childPage.text).toContain(`/branches/${child.body.branch.id}/delete"`);
  });

  it("a destructive action without the script asks on a page first; confirmed, it starts its operation", async () => {
    const p = await project();
    const child = await t.api("POST", `/api/v2/projects/${p.id}/branches`, {
      branch: { name: "doomed" },
      endpoints: [{ type: "read_write" }],
    });
    t.advance(5);
    const b = await signIn();
    const path = `/app/projects/${p.id}/branches/${child.body.branch.id}/delete`;
    const ask = await b.post(path, {});
    expectStatus(ask, 200);
    expect(ask.text).toContain("Are you sure?");
    expect((await t.api("GET", `/api/v2/projects/${p.id}/branches/${child.body.branch.id}`)).status).toBe(
      200,
    );
    const done = await b.post(path, { confirm: "yes" });
    expect(done.status).toBe(303);
    expect((await t.api("GET", `/api/v2/projects/${p.id}/branches/${child.body.branch.id}`)).status).toBe(
      404,
    );
    // A reset from the parent starts the branch's create_branch: the page it lands on names it.
    const other = await t.api("POST", `/api/v2/projects/${p.id}/branches`, { branch: { name: "reset-me" } });
    t.advance(5);
    const reset = `/app/projects/${p.id}/branches/${other.body.branch.id}/reset`;
    expect((await b.post(reset, {})).text).toContain("Are you sure?");
    const started = await b.post(reset, { confirm: "yes" });
    const location = started.headers.get("location") ?? "";
    expect(location).toMatch(/\?notice=.*&ops=[0-9a-f-]{36}$/);
    const landed = await b.get(location);
    expect(landed.text).toContain("data-started-operation");
    expect(landed.text).toContain('class="notice"');
    // Its notice shows because this session's console signed it: the same words from a link do not.
    const url = new URL(location, ORIGIN);
    url.searchParams.set("notice", "Your session expired: paste your API key at evil.example");
    expect((await b.get(`${url.pathname}${url.search}`)).text).not.toContain("evil.example");
    url.searchParams.delete("sig");
    url.searchParams.set("error", "Your session expired: paste your API key at evil.example");
    expect((await b.get(`${url.pathname}${url.search}`)).text).not.toContain("evil.example");
    // Operations the project does not have (an old link, a mistyped id) are left out, the page drawn.
    for (const ops of ["nonexistent", "00000000-0000-4000-8000-000000000000"]) {
      const page = await b.get(`${url.pathname}?ops=${ops}`);
      expectStatus(page, 200);
      expect(page.text).not.toContain("data-started-operation");
    }
  });
});

describe("branch actions", () => {
  it("rename, protect and set as default each ask first, then do what the API does", async () => {
    const p = await project();
    const child = await t.api("POST", `/api/v2/projects/${p.id}/branches`, { branch: { name: "side" } });
    t.advance(5);
    const id = child.body.branch.id as string;
    const b = await signIn();
    const base = `/app/projects/${p.id}/branches/${id}`;
    const branch = async () => (await t.api("GET", `/api/v2/projects/${p.id}/branches/${id}`)).body.branch;
    for (const [action, form] of [
      ["rename", { name: "renamed" }],
      ["protect", { protected: "true" }],
      ["set-default", {}],
    ] as const) {
      const ask = await b.post(`${base}/${action}`, form);
      expect(ask.text, action).toContain("Are you sure?");
      expect(await branch()).toMatchObject({ name: "side", protected: false, default: false });
    }
    expect((await b.post(`${base}/rename`, { name: "renamed", confirm: "yes" })).status).toBe(303);
    expect((await b.post(`${base}/protect`, { protected: "true", confirm: "yes" })).status).toBe(303);
    expect((await b.post(`${base}/set-default`, { confirm: "yes" })).status).toBe(303);
    expect(await branch()).toMatchObject({ name: "renamed", protected: true, default: true });
    // A protected branch cannot be deleted: the API's refusal comes back to the page.
    const refused = await b.post(`${base}/delete`, { confirm: "yes" }, { referer: `${ORIGIN}${base}` });
    expect(refused.status).toBe(303);
    expect(decodeURIComponent(refused.headers.get("location") ?? "")).toContain("error=");
    expect((await branch()).name).toBe("renamed");
  });
});

describe("branch create", () => {
  it("a child branch from past data (a point in time or an LSN), from the schema alone, or deleted after a while", async () => {
    const p = await project();
    t.advance(60);
    const b = await signIn();
    const create = (form: Record<string, string>) =>
      b.post(`/app/projects/${p.id}/branches`, { parent_id: p.branchId, ...form });
    const made = async (res: Awaited<ReturnType<typeof create>>) => {
      expect(res.status, res.text).toBe(303);
      const id = /\/branches\/(br-[a-z0-9-]+)/.exec(res.headers.get("location") ?? "")?.[1];
      t.advance(5);
      return (await t.api("GET", `/api/v2/projects/${p.id}/branches/${id}`)).body.branch;
    };
    const at = new Date(t.clock.now() - 30_000).toISOString().slice(0, 19);
    const past = await made(await create({ name: "past", data: "past", parent_timestamp: at }));
    expect(past.parent_timestamp).toBe(`${at}Z`);
    // A point filled in while "Current data" stays chosen is not used.
    const current = await made(await create({ name: "now", data: "current", parent_timestamp: at }));
    expect(current.parent_timestamp).not.toBe(`${at}Z`);
    const schema = await made(await create({ name: "schema", data: "schema" }));
    expect(schema.init_source).toBe("schema-only");
    const before = t.clock.now();
    const expiring = await made(await create({ name: "expiring", expires_in: "3600" }));
    expect(Date.parse(expiring.expires_at)).toBe(Math.floor((before + 3_600_000) / 1000) * 1000);
    // The project's page offers the same form, its parent a choice among the branches (the default first chosen).
    const dashboard = (await b.get(`/app/projects/${p.id}`)).text;
    expect(dashboard).toContain(`<form method="post" action="/app/projects/${p.id}/branches">`);
    expect(dashboard).toMatch(
      new RegExp(
        `<select name="parent_id"><option value="${p.branchId}" selected="">main</option><option value="br-`,
      ),
    );
    // Past data without a point, or a point the API refuses: the form's words, nothing made.
    const branches = async () =>
      (await t.api("GET", `/api/v2/projects/${p.id}/branches`)).body.branches.length as number;
    const count = await branches();
    const missing = await create({ name: "x", data: "past" });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain("Past data needs a point in time or an LSN.");
    const badTime = await create({ name: "x", data: "past", parent_timestamp: "yesterday" });
    expect(badTime.status).toBe(400);
    expect(badTime.text).toContain("Check the form. Point in time:");
    const badLsn = await create({ name: "x", data: "past", parent_lsn: "not-an-lsn" });
    expect(badLsn.status).toBe(400);
    // Refused as the API refuses it, before anything is made: a point outside the parent's history,
    // a time and an LSN both.
    const future = await create({ name: "x", data: "past", parent_timestamp: "2999-01-01T00:00:00" });
    expect(future.status).toBe(400);
    expect(future.text).toContain("is in the future");
    const both = await create({ name: "x", data: "past", parent_timestamp: at, parent_lsn: "0/1000000" });
    expect(both.status).toBe(400);
    expect(both.text).toContain("at a point in time or at an LSN, not both");
    expect(await branches()).toBe(count);
  });

  it("the trail above a page names the project, on its own page too", async () => {
    const p = await project("shop");
    const b = await signIn();
    const crumb = (html: string) =>
      /<p class="muted"><a href="\/app\/projects">Projects<\/a>(.*?)<\/p>/.exec(html)?.[1];
    expect(crumb((await b.get(`/app/projects/${p.id}`)).text)).toBe(" / shop");
    for (const [path, here] of [
      [`/app/projects/${p.id}/branches/${p.branchId}`, "Branches"],
      [`/app/projects/${p.id}/sql`, "SQL editor"],
      [`/app/projects/${p.id}/monitoring`, "Monitoring"],
    ])
      expect(crumb((await b.get(path as string)).text), path).toBe(
        ` / <a href="/app/projects/${p.id}">shop</a> / ${here}`,
      );
  });
});

describe("accounts", () => {
  it("a session sees only its own account: another's project is not found, and its forms change nothing", async () => {
    const p = await project();
    const other = await t.api("POST", "/_emulator/accounts", { name: "Other" });
    const b = await signIn(other.body.account.id);
    expect((await b.get("/app/projects")).text).not.toContain(p.id);
    expect((await b.get(`/app/projects/${p.id}`)).status).toBe(404);
    expect((await b.get(`/app/projects/${p.id}/branches/${p.branchId}`)).status).toBe(404);
    expect((await b.get(`/app/projects/${p.id}/sql`)).status).toBe(404);
    expect((await b.get(`/app/projects/${p.id}/monitoring`)).status).toBe(404);
    const res = await b.post(`/app/projects/${p.id}/branches/${p.branchId}/delete`, { confirm: "yes" });
    expect(res.status).toBe(404);
    expect((await t.api("GET", `/api/v2/projects/${p.id}/branches/${p.branchId}`)).status).toBe(200);
  });
});

describe("pages", () => {
  it("every page of a project renders; compute labels follow the documented mapping", async () => {
    const p = await project();
    const b = await signIn();
    for (const path of [
      "/app/projects",
      `/app/projects/${p.id}`,
      `/app/projects/${p.id}/operations`,
      `/app/projects/${p.id}/branches/${p.branchId}`,
      `/app/projects/${p.id}/branches/${p.branchId}?tab=roles`,
      `/app/projects/${p.id}/branches/${p.branchId}?tab=children`,
      `/app/projects/${p.id}/branches/${p.branchId}?tab=schema&db=nope&compare=nope`,
      `/app/projects/${p.id}/sql`,
      `/app/projects/${p.id}/monitoring?window=7d`,
      "/app/settings/api-keys",
      "/app/emulator",
    ])
      expectStatus(await b.get(path), 200);
    const page = async () => (await b.get(`/app/projects/${p.id}/branches/${p.branchId}`)).text;
    expect(await page()).toContain("state-Active");
    await t.api("PATCH", `/api/v2/projects/${p.id}/endpoints/${p.endpointId}`, {
      endpoint: { disabled: true },
    });
    t.advance(5);
    expect(await page()).toContain("state-Stopped");
    // A disabled compute is enabled from its row (it cannot be started while disabled).
    const enable = `/app/projects/${p.id}/branches/${p.branchId}/computes/${p.endpointId}/enable`;
    expect(await page()).toContain(`action="${enable}"`);
    expect((await b.post(enable, {})).status).toBe(303);
    const enabled = await t.api("GET", `/api/v2/projects/${p.id}/endpoints/${p.endpointId}`);
    expect(enabled.body.endpoint.disabled).toBe(false);
    await t.api("PATCH", `/api/v2/projects/${p.id}/endpoints/${p.endpointId}`, {
      endpoint: { disabled: true },
    });
    t.advance(5);
    // Without real computes the Schema tab says why it has nothing to show.
    expect((await b.get(`/app/projects/${p.id}/branches/${p.branchId}?tab=schema`)).text).toContain(
      "NEON_EMULATOR_COMPUTE=none",
    );
    expect((await b.get("/app/projects/no-such-project")).status).toBe(404);
    // Any path the console has no page for gets its page saying so, not the API's JSON.
    for (const path of ["/app/nowhere", "/app/projects/", `/app/projects/${p.id}/nothing`]) {
      const missing = await b.get(path);
      expect(missing.status, path).toBe(404);
      expect(missing.text, path).toContain("No console page at");
    }
    // The compute sizes offered are the ones the API takes.
    const sizes = [...(await page()).matchAll(/<option value="([0-9.]+)"/g)].map((m) => Number(m[1]));
    expect(new Set(sizes)).toEqual(new Set([0.25, 0.5, 1, 2, 3, 4, 5, 6, 7]));
    // A window that is no chart's, a name of every object's prototype included (found by the fuzz).
    for (const window of ["2h", "constructor", "toString", "__proto__"])
      expect((await b.get(`/app/projects/${p.id}/monitoring?window=${window}`)).status, window).toBe(400);
  });

  it("the projects list pages by 100, as the API does, and searches by name", async () => {
    for (let i = 0; i < 130; i++)
      expectStatus(await t.api("POST", "/api/v2/projects", { project: { name: `p-${i}` } }), 201);
    const b = await signIn();
    const rows = (html: string) => (html.match(/<a href="\/app\/projects\/[a-z0-9-]+">/g) ?? []).length;
    const first = await b.get("/app/projects");
    expect(rows(first.text)).toBe(100);
    const next = /href="(\/app\/projects\?cursor=[^"]+)"/.exec(first.text)?.[1]?.replaceAll("&amp;", "&");
    expect(next).toBeDefined();
    const second = await b.get(next as string);
    expect(rows(second.text)).toBe(30);
    expect(second.text).not.toContain("Next page");
    const found = await b.get("/app/projects?search=p-12");
    // p-12 and p-120 … p-129
    expect(rows(found.text)).toBe(11);
    expect((await b.get("/app/projects?cursor=no-such-project")).status).toBe(400);
  });

  it("a forward move of the account's clock from the emulator panel", async () => {
    const b = await signIn();
    const before = t.clock.now();
    const res = await b.post("/app/emulator/clock/advance", { seconds: "3600" });
    expect(res.status).toBe(303);
    expect(t.clock.now()).toBe(before + 3_600_000);
    expect((await b.post("/app/emulator/clock/advance", { seconds: "-5" })).status).toBe(400);
  });
});

describe("monitoring records", () => {
  it("connections are recorded per minute (peak and last) and pruned after the retention", async () => {
    const p = await project();
    for (const delta of [1, 1, 1, -1, -1] as const) recordClientConnection(t.ctx, p.endpointId, delta);
    const rows = sqlite()
      .prepare("SELECT peak, last FROM metric_samples WHERE subject_id = ? AND metric = 'connections'")
      .all(p.endpointId);
    expect(rows).toEqual([{ peak: 3, last: 1 }]);
    const b = await signIn();
    const page = await b.get(`/app/projects/${p.id}/monitoring?endpoint_id=${p.endpointId}&window=1h`);
    expect(page.text).toMatch(/aria-label="Open connections \(peak per interval\)"[\s\S]*?<path d="M/);
    // 181 days later (retention 180), in day-long steps: the sample is gone.
    for (let day = 0; day < 181; day++) t.advance(86_400);
    const left = sqlite()
      .prepare("SELECT count(*) AS n FROM metric_samples WHERE subject_id = ? AND metric = 'connections'")
      .get(p.endpointId) as { n: number };
    expect(left.n).toBe(0);
  });

  it("bucketPeaks carries a value until the next sample and takes the highest within a bucket", () => {
    const m = 60_000;
    const samples = [
      { minute: -m, peak: 9, last: 2 },
      { minute: 2 * m, peak: 5, last: 0 },
    ];
    expect(bucketPeaks(samples, 0, 4 * m, 4)).toEqual([2, 2, 5, 0]);
    expect(bucketPeaks([], 0, 4 * m, 2)).toEqual([null, null]);
  });
});
