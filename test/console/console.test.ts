import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import pg from "pg";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http as api, type RunningServer, randomKey, startServer, tempDir } from "../helpers/server.js";

/**
 * The web console in a real Chromium (Debian's `chromium`, driven by playwright-core) against a
 * real server with real computes: sign in with the printed link, keys, a project whose compute
 * becomes Active, the Connect dialog's string used by node-postgres, suspend → Idle, the SQL
 * editor, revocation, and what must be refused (no session, another account, a forged post).
 * Screenshots go to test-results/console/.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = path.resolve("test-results", "console");

let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let dir: string;
const startKey = randomKey();

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary`,
    );
  dir = tempDir();
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(SHOTS, { recursive: true });
  server = await startServer({
    NEON_EMULATOR_DB: path.join(dir, "db.sqlite"),
    NEON_EMULATOR_API_KEY: startKey,
    NEON_EMULATOR_COMPUTE: "postgres",
    NEON_EMULATOR_PG_PORT: "0",
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  context = await browser.newContext();
  page = await context.newPage();
  // The console's destructive buttons ask first; the test says yes.
  page.on("dialog", (dialog) => void dialog.accept());
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

function printedLink(): string {
  const match = server.stdout().match(/Web console: (http:\/\/\S+\/app\/sign-in\?token=\S+)/);
  if (!match?.[1]) throw new Error(`no sign-in link in the server's output:\n${server.stdout()}`);
  return match[1];
}

/** Reloads until `locator`'s text matches (the worker moves computes on the real clock). */
async function reloadUntil(
  text: () => Promise<string>,
  pattern: RegExp,
  timeoutMs = 20_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = await text();
    if (pattern.test(seen)) return seen;
    if (Date.now() > deadline)
      throw new Error(`still "${seen}" after ${timeoutMs} ms, waiting for ${pattern}`);
    await new Promise((r) => setTimeout(r, 300));
    await page.reload();
  }
}

/** The little of the DOM the checks below read in the page (the test's TypeScript has no DOM types). */
interface Shown {
  tagName: string;
  outerHTML: string;
  textContent: string | null;
  labels?: { length: number } | null;
  getAttribute(name: string): string | null;
  ownerDocument: { defaultView: { getComputedStyle(el: Shown): { outlineStyle: string } } };
}

let createdKey = "";
let projectUrl = "";

describe("the web console in Chromium", () => {
  it("nothing is reachable without a session", async () => {
    const res = await fetch(`${server.url}/app/projects`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/app/sign-in");
    const post = await fetch(`${server.url}/app/settings/api-keys`, {
      method: "POST",
      body: new URLSearchParams({ key_name: "x" }),
    });
    expect(post.status).toBe(401);
    const root = await fetch(`${server.url}/`, { redirect: "manual" });
    expect(root.headers.get("location")).toBe("/app/projects");
  });

  it("signs in with the link printed at start (once), with an HttpOnly SameSite=Strict cookie", async () => {
    const link = printedLink();
    await page.goto(link);
    expect(new URL(page.url()).pathname).toBe("/app/projects");
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: "neon_console", httpOnly: true, sameSite: "Strict", path: "/app" });
    // The link works once.
    const again = await fetch(link, { redirect: "manual" });
    expect(again.status).toBe(401);
    expect(await again.text()).toContain("used already or has expired");
  });

  it("creates an API key, shown once, that the API accepts", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByLabel("Key name").fill("from the console");
    await page.getByRole("button", { name: "Create" }).click();
    createdKey = (await page.locator("#created-key").textContent()) ?? "";
    expect(createdKey).toMatch(/^[a-z0-9]{64}$/);
    expect(await page.getByText("it will not be shown again").count()).toBe(1);
    await shot("api-keys");
    const res = await api(server.url, createdKey, "GET", "/api/v2/projects");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // A reload sends the form again: refused, no second key made.
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(409);
    expect(await page.getByRole("alert").innerText()).toContain("This form was sent already");
    const keys = await api(server.url, createdKey, "GET", "/api/v2/api_keys");
    expect(keys.body.filter((k: { name: string }) => k.name === "from the console")).toHaveLength(1);
    // Listed with its name; the secret is not on the list page.
    await page.goto(`${server.url}/app/settings/api-keys`);
    expect(await page.locator("tbody").innerText()).toContain("from the console");
    expect(await page.content()).not.toContain(createdKey);
  });

  it("creates a project and watches its compute become Active", async () => {
    await page.goto(`${server.url}/app/projects`);
    await page.getByLabel("Project name").fill("console-demo");
    await page.getByRole("button", { name: "Create project" }).click();
    projectUrl = page.url();
    expect(projectUrl).toMatch(/\/app\/projects\/[a-z0-9-]+\?/);
    expect(await page.locator("[data-started-operation]").count()).toBeGreaterThan(0);
    // The operations list refreshes itself while an operation runs: no reload here.
    expect(await page.locator("#operations").getAttribute("data-live")).toBe("true");
    await expect
      .poll(
        async () => {
          const tags = await page.locator("[data-operation-id] .tag").allInnerTexts();
          return tags.length > 0 && tags.every((t) => t === "finished");
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe(true);
    expect(await page.locator("#operations").getAttribute("data-live")).toBe("false");
    // The banner of what the create started follows too, and once all is done the page shows the
    // state they left (the compute Active) without a reload by hand.
    await expect
      .poll(
        async () =>
          (await page.locator("[data-started-operation] .tag").allInnerTexts()).every(
            (t) => t === "finished",
          ),
        { timeout: 20_000, interval: 100 },
      )
      .toBe(true);
    await expect
      .poll(() => page.locator("#started-operations").getAttribute("data-live"), { timeout: 20_000 })
      .toBe("false");
    await expect
      .poll(async () => (await page.locator("main").innerText()).includes("Active"), {
        timeout: 20_000,
        interval: 200,
      })
      .toBe(true);
    await page.getByRole("link", { name: "main" }).first().click();
    const status = () => page.locator("[data-endpoint-id] [data-status]").first().innerText();
    expect(await reloadUntil(status, /^Active/)).toMatch(/^Active/);
    expect(await page.locator("[data-endpoint-id] td").nth(1).innerText()).toBe("R/W");
    await shot("branch");
    // The API agrees.
    const projectId = new URL(projectUrl).pathname.split("/")[3];
    const eps = await api(server.url, startKey, "GET", `/api/v2/projects/${projectId}/endpoints`);
    expect(eps.body.endpoints[0].current_state).toBe("active");
  });

  it("the Connect dialog's string connects with node-postgres", async () => {
    await page.goto(projectUrl);
    await page.getByRole("button", { name: "Show connection string" }).click();
    const uri = (await page.locator("#connection-string").textContent()) ?? "";
    expect(uri).toMatch(/^postgresql:\/\//);
    // Shown masked, as Neon's console shows it; the whole string is behind "Show password".
    const shown = (await page.locator("fieldset.secret > code").textContent()) ?? "";
    expect(shown).toBe(uri.replace(`:${new URL(uri).password}@`, ":********@"));
    await shot("dashboard");
    const client = new pg.Client({ connectionString: uri });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT current_database() AS db, current_user AS who");
      expect(rows[0]).toEqual({ db: "neondb", who: "neondb_owner" });
    } finally {
      await client.end();
    }
  });

  it("runs statements in the SQL editor: rows as a table, errors as Postgres reports them", async () => {
    await page.goto(projectUrl);
    await page.getByRole("link", { name: "SQL editor" }).click();
    const runSql = async (sql: string) => {
      await page.getByLabel("Statement").fill(sql);
      await page.getByRole("button", { name: "Run" }).click();
    };
    // A script: its statements run in order, the last one's result is shown (as psql -c does).
    await runSql("CREATE TABLE fruit (name text); INSERT INTO fruit VALUES ('apple'), ('pear')");
    expect(await page.locator("[data-command]").innerText()).toBe("INSERT 2");
    await runSql("SELECT 1 AS one; SELECT name FROM fruit ORDER BY name");
    expect(await page.locator("[data-result] th").allInnerTexts()).toEqual(["name"]);
    expect(await page.locator("[data-result] td").allInnerTexts()).toEqual(["apple", "pear"]);
    // Ctrl+Enter runs; the editor keeps the focus for the next statement.
    await page.getByLabel("Statement").fill("SELECT count(*) AS n FROM fruit");
    await Promise.all([page.waitForURL(/\/sql/), page.getByLabel("Statement").press("Control+Enter")]);
    await page.waitForSelector("[data-result]");
    expect(await page.locator("[data-result] td").allInnerTexts()).toEqual(["2"]);
    expect(await page.evaluate("document.activeElement && document.activeElement.name")).toBe("query");
    await runSql("-- only a comment");
    expect(await page.locator("[data-command]").innerText()).toBe(
      "Nothing ran: the script holds no statement (only comments or blanks).",
    );
    await shot("sql-editor");
    await runSql("SELECT * FROM no_such_table");
    const error = await page.getByRole("alert").innerText();
    expect(error).toContain("42P01");
    expect(error).toContain('relation "no_such_table" does not exist');
    // The project's IP allow list applies to the editor, by the browser's address.
    const projectId = new URL(projectUrl).pathname.split("/")[3];
    const allow = (ips: string[]) =>
      api(server.url, startKey, "PATCH", `/api/v2/projects/${projectId}`, {
        project: { settings: { allowed_ips: { ips } } },
      });
    expect((await allow(["10.0.0.1"])).status).toBe(200);
    await runSql("SELECT name FROM fruit");
    expect(await page.getByRole("alert").innerText()).toContain(
      "This IP address 127.0.0.1 is not allowed to connect to this endpoint.",
    );
    expect((await allow([])).status).toBe(200);
    await runSql("SELECT count(*) AS n FROM fruit");
    expect(await page.locator("[data-result] td").allInnerTexts()).toEqual(["2"]);
    // Refused before reaching Postgres (a role gone since the page was drawn): the reason, with the statement kept.
    await page.getByLabel("Role").evaluate((element) => {
      const select = element as unknown as { options: { value: string }[]; value: string };
      (select.options[0] as { value: string }).value = "gone_role";
      select.value = "gone_role";
    });
    await runSql("SELECT 'kept' AS statement");
    expect(await page.getByRole("alert").innerText()).toContain("gone_role");
    expect(await page.getByLabel("Statement").inputValue()).toBe("SELECT 'kept' AS statement");
  });

  it("roles and databases: a new role's revealed password connects; databases made and deleted", async () => {
    await page.goto(projectUrl);
    await page.getByRole("link", { name: "main" }).first().click();
    await page.getByRole("link", { name: "Roles & Databases" }).click();
    await page.getByLabel("New role name").fill("app_user");
    await page.getByRole("button", { name: "Create role" }).click();
    // The new role's password is shown at once; Reveal shows the same one later.
    expect(await page.locator("h1").innerText()).toBe("Role app_user created");
    const password = (await page.locator("#role-password").textContent()) ?? "";
    expect(password.length).toBeGreaterThan(8);
    await page.getByRole("link", { name: "Back to roles and databases" }).click();
    await page.locator("tr[data-role='app_user']").getByRole("button", { name: "Reveal password" }).click();
    expect(await page.locator("#role-password").textContent()).toBe(password);
    // The Connect dialog, as app_user: the password it shows is the one revealed, and it works.
    await page.goto(projectUrl);
    // Choosing is enough: the string follows each choice (the button is for pages without the script).
    await page.getByLabel("Role").selectOption("app_user");
    await page.waitForURL(/role_name=app_user/);
    const uri = (await page.locator("#connection-string").textContent()) ?? "";
    expect(decodeURIComponent(new URL(uri).password)).toBe(password);
    // By keyboard: the page drawn for the choice gives the focus back to the field.
    await page.getByLabel("Connection pooling").focus();
    await page.keyboard.press("Space");
    await page.waitForURL(/pooled=true/);
    expect(await page.evaluate("document.activeElement && document.activeElement.name")).toBe("pooled");
    expect((await page.locator("#connection-string").textContent()) ?? "").toMatch(
      /endpoint%3Dep-[a-z0-9-]+-pooler$/,
    );
    expect(await page.getByLabel("Role").inputValue()).toBe("app_user");
    const client = new pg.Client({ connectionString: uri });
    await client.connect();
    try {
      expect((await client.query("SELECT current_user AS who")).rows[0].who).toBe("app_user");
    } finally {
      await client.end();
    }
    await page.goto(`${projectUrl.split("?")[0]}`);
    await page.getByRole("link", { name: "main" }).first().click();
    await page.getByRole("link", { name: "Roles & Databases" }).click();
    await page.getByLabel("New database name").fill("appdb");
    await page.getByLabel("Owner").selectOption("app_user");
    await page.getByRole("button", { name: "Create database" }).click();
    expect(await page.locator("tr[data-database='appdb'] td").nth(1).innerText()).toBe("app_user");
    await page.locator("tr[data-database='appdb']").getByRole("button", { name: "Delete" }).click();
    expect(await page.locator("tr[data-database='appdb']").count()).toBe(0);
    await page.locator("tr[data-role='app_user']").getByRole("button", { name: "Delete" }).click();
    expect(await page.locator("tr[data-role='app_user']").count()).toBe(0);
  });

  it("branch actions: a child branch, renamed, reset from its parent (its data with it), deleted", async () => {
    await page.goto(projectUrl);
    await page.getByRole("link", { name: "main" }).first().click();
    await page.getByRole("link", { name: "Child branches" }).click();
    // Refused (an LSN that is none), the form comes back as it was filled, with the reason.
    await page.getByLabel("Name", { exact: true }).fill("kept-name");
    await page.getByLabel("Past data, as it was at").check();
    await page.getByLabel("or LSN").fill("not-an-lsn");
    await page.getByRole("button", { name: "Create branch" }).click();
    expect(await page.locator("main > p.error").innerText()).toContain("LSN");
    expect(await page.getByLabel("Name", { exact: true }).inputValue()).toBe("kept-name");
    expect(await page.getByLabel("Past data, as it was at").isChecked()).toBe(true);
    expect(await page.getByLabel("or LSN").inputValue()).toBe("not-an-lsn");
    await page.getByLabel("Current data").check();
    await page.getByLabel("or LSN").fill("");
    await page.getByLabel("Name", { exact: true }).fill("feature");
    await page.getByRole("button", { name: "Create branch" }).click();
    expect(await page.locator("[data-started-operation]").count()).toBeGreaterThan(0);
    const childUrl = page.url().split("?")[0] as string;
    const childId = childUrl.split("/").pop() as string;
    // A branch being made refuses changes (423): its page says when it is ready.
    await reloadUntil(() => page.locator("main").innerText(), /state ready/);
    expect(await page.locator("[data-branch-origin]").innerText()).toMatch(
      /^Branched from main as of .+ at LSN \d+\/[0-9A-F]+$/,
    );
    await page.getByLabel("New name").fill("feature-2");
    await page.getByRole("button", { name: "Rename" }).click();
    expect(await page.locator("h1").innerText()).toContain("feature-2");
    // The child has the parent's table; drop it there, then reset from the parent brings it back.
    const sqlOnChild = async (statement: string) => {
      await page.goto(`${projectUrl.split("?")[0]}/sql?branch_id=${childId}`);
      await page.getByLabel("Statement").fill(statement);
      await page.getByRole("button", { name: "Run" }).click();
    };
    // Choosing the branch in the editor draws it for that branch, the statement written kept.
    await page.goto(`${projectUrl.split("?")[0]}/sql`);
    await page.getByLabel("Statement").fill("DROP TABLE fruit");
    await Promise.all([page.waitForURL(/branch_id=/), page.getByLabel("Branch").selectOption(childId)]);
    expect(await page.locator("[data-runs-on]").innerText()).toBe("Runs on branch feature-2");
    expect(await page.getByLabel("Statement").inputValue()).toBe("DROP TABLE fruit");
    await page.getByRole("button", { name: "Run" }).click();
    expect(await page.locator("[data-command]").innerText()).toBe("DROP");
    // The Schema tab: the child's schema lacks the table; compared with its parent, the diff says so.
    await page.goto(`${childUrl}?tab=schema`);
    expect(await page.locator("[data-schema]").innerText()).toContain("PostgreSQL database dump");
    expect(await page.locator("[data-schema]").innerText()).not.toContain("CREATE TABLE public.fruit");
    await Promise.all([
      page.waitForURL(/compare=/),
      page.getByLabel("Compare with").selectOption({ index: 1 }),
    ]);
    const removed = await page.locator("[data-schema-diff] .del").allInnerTexts();
    expect(removed).toContain("-CREATE TABLE public.fruit (\n");
    expect(removed).toContain("--- Name: fruit; Type: TABLE; Schema: public; Owner: neondb_owner\n");
    expect(await page.locator("[data-schema-legend]").innerText()).toBe(
      "− main (parent) · + feature-2 (this branch)",
    );
    await shot("schema-diff");
    await page.goto(childUrl);
    await page.getByRole("button", { name: "Reset from parent" }).click();
    expect(await page.locator("main").innerText()).toContain("reset from its parent");
    await reloadUntil(() => page.locator("main").innerText(), /state ready/);
    await sqlOnChild("SELECT count(*) AS n FROM fruit");
    expect(await page.locator("[data-result] td").allInnerTexts()).toEqual(["2"]);
    await page.goto(`${childUrl}?tab=schema`);
    await Promise.all([
      page.waitForURL(/compare=/),
      page.getByLabel("Compare with").selectOption({ index: 1 }),
    ]);
    expect(await page.locator("[data-schema-same]").innerText()).toBe("The schemas are the same.");
    await page.goto(childUrl);
    await page
      .getByRole("region", { name: "Branch actions" })
      .getByRole("button", { name: "Delete" })
      .click();
    expect(await page.locator("main").innerText()).toContain("deleted");
    const gone = await api(
      server.url,
      startKey,
      "GET",
      `/api/v2/projects/${childUrl.split("/")[5]}/branches/${childId}`,
    );
    expect(gone.status).toBe(404);
  });

  it("edits a compute's size: the table and the API show the new range", async () => {
    await page.goto(projectUrl);
    await page.getByRole("link", { name: "main" }).first().click();
    const row = page.locator("[data-endpoint-id]").first();
    await row.getByText("Edit", { exact: true }).click();
    await row.getByLabel("Maximum CU").selectOption("2");
    await row.getByRole("button", { name: "Save" }).click();
    expect(await page.locator("[data-endpoint-id] td").nth(3).innerText()).toBe("0.25–2 CU");
    const projectId = new URL(projectUrl).pathname.split("/")[3];
    const eps = await api(server.url, startKey, "GET", `/api/v2/projects/${projectId}/endpoints`);
    expect(eps.body.endpoints[0].autoscaling_limit_max_cu).toBe(2);
  });

  it("monitoring draws the compute's state, its connections and its data size", async () => {
    await page.goto(projectUrl);
    await page.getByRole("link", { name: "Monitoring" }).click();
    await page.getByLabel("Window").selectOption("1h");
    await page.getByRole("button", { name: "Show" }).click();
    const state = page.getByRole("img", { name: "Compute state" });
    // The background and at least one active interval.
    expect(await state.locator("rect").count()).toBeGreaterThan(1);
    const connections = page.getByRole("img", { name: "Open connections (peak per interval)" });
    expect(await connections.locator("path").getAttribute("d")).toMatch(/^M/);
    const size = page.getByRole("img", { name: /Database size/ });
    expect(await size.locator("path").getAttribute("d")).toMatch(/^M/);
    await shot("monitoring");
  });

  it("the emulator panel arms and clears faults", async () => {
    await page.getByRole("link", { name: "Emulator", exact: true }).click();
    expect(await page.locator("main").innerText()).toContain("The clock is real");
    await page.getByLabel("operations of").selectOption("start_compute");
    await page.getByRole("button", { name: "Arm fault" }).click();
    const faults = await api(server.url, startKey, "GET", "/_emulator/faults");
    expect(faults.body.faults.map((f: { action: string }) => f.action)).toEqual(["start_compute"]);
    await page.getByRole("button", { name: "Clear all faults" }).click();
    expect(await page.getByText("No faults armed.").count()).toBe(1);
  });

  it("every page is usable by keyboard and names its controls and charts", async () => {
    const projectPath = new URL(projectUrl).pathname;
    const branchPath = await page
      .goto(projectUrl)
      .then(() => page.getByRole("link", { name: "main" }).first().getAttribute("href"));
    const pages = [
      "/app/projects",
      projectPath,
      branchPath,
      `${branchPath}?tab=roles`,
      `${branchPath}?tab=children`,
      `${projectPath}/sql`,
      `${projectPath}/monitoring`,
      "/app/settings/api-keys",
      "/app/emulator",
    ];
    for (const at of pages) {
      await page.goto(`${server.url}${at}`);
      const unnamed = await page
        .locator("input:not([type=hidden]), select, textarea, button")
        .evaluateAll((els: Shown[]) =>
          els
            .filter(
              (el) =>
                !(
                  el.labels?.length ||
                  el.getAttribute("aria-label") ||
                  (el.tagName === "BUTTON" && el.textContent?.trim())
                ),
            )
            .map((el) => el.outerHTML.slice(0, 80)),
        );
      expect(unnamed, `controls without a name on ${at}`).toEqual([]);
      const charts = await page
        .locator("svg")
        .evaluateAll((els: Shown[]) =>
          els
            .filter((svg) => svg.getAttribute("role") !== "img" || !svg.getAttribute("aria-label"))
            .map((svg) => svg.outerHTML.slice(0, 80)),
        );
      expect(charts, `charts without a name on ${at}`).toEqual([]);
      expect(await page.locator("h1").count(), `one heading on ${at}`).toBe(1);
    }
    // By keyboard alone: Tab from the top reaches the project form, which opens with Enter and
    // creates a project with the focus outlined all the way.
    await page.goto(`${server.url}/app/projects`);
    const focused = () =>
      page.locator(":focus").evaluate((el: Shown) => ({
        text: (el.textContent ?? "").trim().slice(0, 40),
        outline: el.ownerDocument.defaultView.getComputedStyle(el).outlineStyle,
      }));
    let seen = { text: "", outline: "" };
    for (let i = 0; i < 20 && !/^New project/.test(seen.text); i++) {
      await page.keyboard.press("Tab");
      seen = await focused();
    }
    expect(seen.text).toMatch(/^New project/);
    expect(seen.outline).not.toBe("none");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    await page.keyboard.type("keyboard-made");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/app\/projects\/[a-z0-9-]+\?/);
    expect(await page.locator("h1").innerText()).toBe("keyboard-made");
  });

  it("works without JavaScript: a destructive action asks on a page of its own", async () => {
    const link = await api(server.url, startKey, "POST", "/_emulator/console/sign-in-link");
    const plain = await browser.newContext({ javaScriptEnabled: false });
    try {
      const p = await plain.newPage();
      await p.goto(link.body.url);
      await p.goto(`${server.url}/app/settings/api-keys`);
      await p.getByLabel("Key name").fill("no-script");
      await p.getByRole("button", { name: "Create" }).click();
      const key = (await p.locator("#created-key").textContent()) ?? "";
      await p.locator("tr", { hasText: "no-script" }).getByRole("button", { name: "Revoke" }).click();
      expect(await p.locator("h1").innerText()).toBe("Are you sure?");
      expect((await api(server.url, key, "GET", "/api/v2/projects")).status).toBe(200);
      await p.getByRole("button", { name: "Yes, continue" }).click();
      expect(await p.getByRole("status").innerText()).toContain("revoked");
      expect((await api(server.url, key, "GET", "/api/v2/projects")).status).toBe(401);
    } finally {
      await plain.close();
    }
  });

  it("suspends the compute and shows Idle", async () => {
    await page.goto(projectUrl);
    await page.getByRole("link", { name: "main" }).first().click();
    await page.getByRole("button", { name: "Suspend" }).first().click();
    const status = () => page.locator("[data-endpoint-id] [data-status]").first().innerText();
    expect(await reloadUntil(status, /^Idle$/)).toBe("Idle");
    await shot("idle");
  });

  it("the SQL editor wakes an idle compute", async () => {
    const branchPage = page.url();
    await page.goto(projectUrl);
    await page.getByRole("link", { name: "SQL editor" }).click();
    await page.getByLabel("Statement").fill("SELECT count(*) AS n FROM fruit");
    await page.getByRole("button", { name: "Run" }).click();
    expect(await page.locator("[data-result] td").allInnerTexts()).toEqual(["2"]);
    await page.goto(branchPage);
    const status = () => page.locator("[data-endpoint-id] [data-status]").first().innerText();
    expect(await reloadUntil(status, /^Active$/)).toBe("Active");
  });

  it("names do not break the page: a 256-character name wraps, a right-to-left override stays inside its name", async () => {
    const make = async (name: string) => {
      const res = await fetch(`${server.url}/api/v2/projects`, {
        method: "POST",
        headers: { authorization: `Bearer ${startKey}`, "content-type": "application/json" },
        body: JSON.stringify({ project: { name } }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { project: { id: string } }).project.id;
    };
    const long = await make("x".repeat(256));
    const rtl = await make("abc\u202Edef");
    for (const url of ["/app/projects", `/app/projects/${long}`]) {
      await page.goto(`${server.url}${url}`);
      const [scroll, width] = (await page.evaluate(
        "[document.documentElement.scrollWidth, window.innerWidth]",
      )) as [number, number];
      expect(scroll, url).toBeLessThanOrEqual(width);
    }
    await page.goto(`${server.url}/app/projects`);
    // The id printed after the name reads left to right: its first letter left of its last.
    const inOrder = await page.evaluate(`(() => {
      const span = [...document.querySelectorAll("span.muted")].find((s) => s.textContent === ${JSON.stringify(rtl)});
      const text = span.firstChild;
      const x = (i) => {
        const r = document.createRange();
        r.setStart(text, i);
        r.setEnd(text, i + 1);
        return r.getBoundingClientRect().left;
      };
      return x(0) < x(text.length - 1);
    })()`);
    expect(inOrder).toBe(true);
    await shot("odd-names");
    // A phone-sized window: no page scrolls sideways (tables scroll within themselves).
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      for (const url of ["/app/projects", `/app/projects/${long}`, new URL(projectUrl).pathname]) {
        await page.goto(`${server.url}${url}`);
        const [scroll, width] = (await page.evaluate(
          "[document.documentElement.scrollWidth, document.documentElement.clientWidth]",
        )) as [number, number];
        expect(scroll, `${url} at 400 px`).toBeLessThanOrEqual(width);
      }
      await shot("narrow");
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
    for (const id of [long, rtl])
      await fetch(`${server.url}/api/v2/projects/${id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${startKey}` },
      });
  });

  it("a forged cross-site POST is refused and changes nothing", async () => {
    const keys = await api(server.url, createdKey, "GET", "/api/v2/api_keys");
    const id = keys.body.find((k: { name: string }) => k.name === "from the console").id;
    // A page on another origin (this host, another port: same site, so the cookie goes along).
    const evil = http.createServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(
        `<form id="f" method="post" action="${server.url}/app/settings/api-keys/${id}/revoke"><input name="confirm" value="yes"></form><script>document.getElementById("f").submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    try {
      const forged = await context.newPage();
      const answer = forged.waitForResponse((r) => r.url().includes("/revoke"));
      await forged.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      expect((await answer).status()).toBe(403);
      await forged.close();
    } finally {
      evil.close();
    }
    const still = await api(server.url, createdKey, "GET", "/api/v2/projects");
    expect(still.status).toBe(200);
  });

  it("revokes the key (confirmed) and the API refuses it at once", async () => {
    await page.goto(`${server.url}/app/settings/api-keys`);
    await page.locator("tr", { hasText: "from the console" }).getByRole("button", { name: "Revoke" }).click();
    expect(await page.getByRole("status").innerText()).toContain("revoked");
    const res = await api(server.url, createdKey, "GET", "/api/v2/projects");
    expect(res.status).toBe(401);
  });

  it("another account's session sees none of this account's objects", async () => {
    const other = await api(server.url, startKey, "POST", "/_emulator/accounts", { name: "Other" });
    const link = await api(server.url, other.body.key.key, "POST", "/_emulator/console/sign-in-link");
    expect(link.status).toBe(200);
    const otherContext = await browser.newContext();
    try {
      const otherPage = await otherContext.newPage();
      await otherPage.goto(link.body.url);
      expect(await otherPage.locator("main").innerText()).not.toContain("console-demo");
      const res = await otherPage.goto(projectUrl);
      expect(res?.status()).toBe(404);
    } finally {
      await otherContext.close();
    }
  });

  it("signs out: the cookie no longer opens a page; a live list open elsewhere says the session ended", async () => {
    const cookie = (await context.cookies())[0]?.value ?? "";
    // A project page drawn as if an operation were under way: its script refreshes the list each second.
    const watching = await context.newPage();
    const projectPath = new URL(projectUrl).pathname;
    await watching.route(
      (url) => url.pathname === projectPath,
      async (route) => {
        const response = await route.fetch();
        const body = (await response.text()).replace(/(id="operations"[^>]*data-live=)"false"/, '$1"true"');
        await route.fulfill({ response, body });
      },
    );
    await watching.goto(projectUrl);
    const rows = await watching.locator("#operations tbody tr").count();
    expect(rows).toBeGreaterThan(0);
    await page.goto(`${server.url}/app/projects`);
    await page.getByRole("button", { name: "Sign out" }).click();
    expect(new URL(page.url()).pathname).toBe("/app/sign-in");
    const res = await fetch(`${server.url}/app/projects`, {
      headers: { cookie: `neon_console=${cookie}` },
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    await watching
      .locator("#operations")
      .getByRole("alert")
      .filter({ hasText: "Your console session ended" })
      .waitFor({ timeout: 10_000 });
    expect(await watching.locator("#operations tbody tr").count()).toBe(rows);
    await watching.close();
  });
});
