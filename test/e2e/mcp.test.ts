import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicContract } from "./contract.js";
import { type E2E, startE2E } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: tool output is asserted field by field
type Json = any;

const MCP_PACKAGE = path.resolve("node_modules/@neondatabase/mcp-server-neon");

/**
 * The serverless driver the MCP server's SQL tools use. It pins its own copy; the preload must
 * configure that very module instance, so it is looked up beside the MCP server first.
 */
function serverlessDriverOfMcp(): string {
  const nested = path.join(MCP_PACKAGE, "node_modules/@neondatabase/serverless/index.mjs");
  return fs.existsSync(nested) ? nested : path.resolve("node_modules/@neondatabase/serverless/index.mjs");
}

/**
 * Neon's MCP server (@neondatabase/mcp-server-neon), unmodified, driven over stdio by the MCP SDK's
 * client: its management tools against the API (NEON_API_HOST), its SQL tools through the
 * serverless driver's SQL over HTTP into real computes. Every API response it received is
 * validated against the public document.
 */
describe("Neon's MCP server over stdio (real computes)", { timeout: 180_000 }, () => {
  let e2e: E2E;
  let client: Client;
  let stderr = "";
  let projectId = "";
  let mainBranchId = "";

  /** Calls a tool (its inputs travel as `params`); fails with the tool's own text when it reports an error. */
  async function call(name: string, args: Record<string, unknown> = {}): Promise<string> {
    e2e.step(`mcp: ${name}`);
    const result = (await client.callTool({ name, arguments: { params: args } })) as Json;
    const text = (result.content as Json[]).map((c) => c.text).join("\n");
    if (result.isError) throw new Error(`${name} reported an error: ${text}\n(server stderr: ${stderr})`);
    return text;
  }
  /** As call(), expecting the tool to report an error; resolves with its text. */
  async function callFailing(name: string, args: Record<string, unknown>): Promise<string> {
    e2e.step(`mcp: ${name} (failing)`);
    const result = (await client.callTool({ name, arguments: { params: args } })) as Json;
    const text = (result.content as Json[]).map((c) => c.text).join("\n");
    expect(result.isError, `${name} should have failed: ${text}`).toBe(true);
    return text;
  }
  const sql = async (statement: string, extra: Record<string, unknown> = {}): Promise<Json[]> =>
    JSON.parse(await call("run_sql", { sql: statement, projectId, ...extra }));
  const api = async (method: string, route: string, body?: unknown): Promise<Json> => {
    const res = await fetch(`${e2e.apiBase}${route}`, {
      method,
      headers: { authorization: `Bearer ${e2e.key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route} → ${res.status}: ${text}`);
    return JSON.parse(text);
  };

  beforeAll(async () => {
    e2e = await startE2E({ NEON_EMULATOR_COMPUTE: "postgres", NEON_EMULATOR_PG_PORT: "0" });
    // What a user adds to run the MCP server against the emulator: the API host, and the driver's
    // SQL-over-HTTP endpoint (the README's neonConfig line), loaded before the server starts.
    const preload = path.join(e2e.cwd, "neon-emulator-driver.mjs");
    fs.writeFileSync(
      preload,
      `import { neonConfig } from ${JSON.stringify(pathToFileURL(serverlessDriverOfMcp()).href)};\n` +
        `neonConfig.fetchEndpoint = "http://127.0.0.1:${e2e.server.port}/sql";\n`,
    );
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !k.startsWith("NEON_") && k !== "NODE_OPTIONS") env[k] = v;
    }
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(MCP_PACKAGE, "dist/index.js"), "start", e2e.key, "--no-analytics"],
      env: {
        ...env,
        HOME: e2e.cwd,
        NEON_API_HOST: e2e.apiBase,
        NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`,
      },
      cwd: e2e.cwd,
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    client = new Client({ name: "neon-emulator-e2e", version: "1.0.0" });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await e2e?.close();
  });

  it("starts against the emulator and offers Neon's 23 tools", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "complete_database_migration",
        "complete_query_tuning",
        "create_branch",
        "create_project",
        "delete_branch",
        "delete_project",
        "describe_branch",
        "describe_project",
        "describe_table_schema",
        "explain_sql_statement",
        "get_connection_string",
        "get_database_tables",
        "list_branch_computes",
        "list_organizations",
        "list_projects",
        "list_shared_projects",
        "list_slow_queries",
        "prepare_database_migration",
        "prepare_query_tuning",
        "provision_neon_auth",
        "reset_from_parent",
        "run_sql",
        "run_sql_transaction",
      ].sort(),
    );
  });

  it("create_project makes a project whose connection string the emulator serves", async () => {
    const text = await call("create_project", { name: "mcp-app" });
    projectId = /The project_id is "([^"]+)"/.exec(text)?.[1] ?? "";
    mainBranchId = /\(ID: (br-[^)]+)\)/.exec(text)?.[1] ?? "";
    expect(projectId, text).not.toBe("");
    const project = await api("GET", `/projects/${projectId}`);
    expect(project.project.name).toBe("mcp-app");
    const uri = /URI: (\S+)/.exec(text)?.[1] ?? "";
    const served = await api(
      "GET",
      `/projects/${projectId}/connection_uri?branch_id=${mainBranchId}&database_name=neondb&role_name=neondb_owner`,
    );
    expect(uri).toBe(served.uri);
  });

  it("list_projects, describe_project, list_organizations and list_shared_projects read the account", async () => {
    const listed = JSON.parse(await call("list_projects", {}));
    expect(listed.projects.map((p: Json) => p.id)).toContain(projectId);
    const me = await api("GET", "/users/me/organizations");
    expect(listed.organization?.id).toBe(me.organizations[0]?.id);

    const described = await call("describe_project", { projectId });
    expect(described).toContain("This project is called mcp-app.");
    expect(described).toContain(mainBranchId);

    const orgs = JSON.parse(await call("list_organizations", {}));
    expect(orgs.map((o: Json) => o.id)).toEqual(me.organizations.map((o: Json) => o.id));
    expect(JSON.parse(await call("list_shared_projects", {}))).toEqual({ shared_projects: [], count: 0 });
  });

  it("run_sql and run_sql_transaction reach the branch's real Postgres", async () => {
    await call("run_sql_transaction", {
      projectId,
      sqlStatements: [
        "CREATE TABLE todos (id int PRIMARY KEY, title text NOT NULL)",
        "INSERT INTO todos VALUES (1, 'write tests'), (2, 'ship')",
      ],
    });
    expect(await sql("SELECT id, title FROM todos ORDER BY id")).toEqual([
      { id: 1, title: "write tests" },
      { id: 2, title: "ship" },
    ]);
    // A Postgres error surfaces as the tool's error, with Postgres' own message.
    expect(await callFailing("run_sql", { projectId, sql: "SELECT * FROM missing_table" })).toContain(
      'relation "missing_table" does not exist',
    );
  });

  it("get_database_tables, describe_table_schema, describe_branch and explain_sql_statement read the schema", async () => {
    const tables = JSON.parse(await call("get_database_tables", { projectId }));
    expect(tables).toContainEqual(expect.objectContaining({ table_schema: "public", table_name: "todos" }));

    const schema = await call("describe_table_schema", { projectId, tableName: "todos" });
    expect(schema).toContain("title");
    expect(schema).toContain("todos_pkey");

    const tree = await call("describe_branch", { projectId, branchId: mainBranchId });
    expect(tree).toContain("todos");

    const plan = JSON.parse(
      await call("explain_sql_statement", {
        projectId,
        sql: "SELECT * FROM todos WHERE id = 1",
        analyze: false,
      }),
    );
    expect(JSON.stringify(plan)).toContain("todos_pkey");
    // EXPLAIN ANALYZE asks for FILECACHE, an option of Neon's Postgres fork the stock server lacks.
    expect(
      await callFailing("explain_sql_statement", { projectId, sql: "SELECT * FROM todos WHERE id = 1" }),
    ).toContain('unrecognized EXPLAIN option "filecache"');
  });

  it("get_connection_string and list_branch_computes describe the default branch's compute", async () => {
    const text = await call("get_connection_string", { projectId });
    const computes = JSON.parse(await call("list_branch_computes", { projectId, branchId: mainBranchId }));
    expect(computes).toHaveLength(1);
    expect(computes[0]).toMatchObject({ compute_type: "read_write", branch_id: mainBranchId });
    expect(text).toContain(computes[0].id);
  });

  it("create_branch copies the data; reset_from_parent throws the child's changes away; delete_branch", async () => {
    const created = await call("create_branch", { projectId, branchName: "feature" });
    const branchId = /Branch ID: (\S+)/.exec(created)?.[1] ?? "";
    expect(/Parent branch: (\S+)/.exec(created)?.[1]).toBe(mainBranchId);
    await sql("INSERT INTO todos VALUES (3, 'only on feature')", { branchId });
    expect(await sql("SELECT count(*)::int AS n FROM todos", { branchId })).toEqual([{ n: 3 }]);
    expect(await sql("SELECT count(*)::int AS n FROM todos")).toEqual([{ n: 2 }]);

    const reset = await call("reset_from_parent", { projectId, branchIdOrName: "feature" });
    expect(reset).toContain("Branch reset from parent successfully.");
    expect(await sql("SELECT count(*)::int AS n FROM todos", { branchId })).toEqual([{ n: 2 }]);

    await call("delete_branch", { projectId, branchId });
    const branches = await api("GET", `/projects/${projectId}/branches`);
    expect(branches.branches.map((b: Json) => b.id)).not.toContain(branchId);
  });

  it("prepare/complete_database_migration test on a temporary branch, then apply to main", async () => {
    const prepared = await call("prepare_database_migration", {
      projectId,
      migrationSql: "ALTER TABLE todos ADD COLUMN done boolean NOT NULL DEFAULT false",
    });
    const migrationId = /<migration_id>([^<]+)<\/migration_id>/.exec(prepared)?.[1] ?? "";
    const tempBranch = /<id>([^<]+)<\/id>/.exec(prepared)?.[1] ?? "";
    expect(await sql("SELECT done FROM todos WHERE id = 1", { branchId: tempBranch })).toEqual([
      { done: false },
    ]);
    // Main is untouched until the migration is completed.
    await callFailing("run_sql", { projectId, sql: "SELECT done FROM todos" });

    const completed = await call("complete_database_migration", { migrationId });
    expect(completed).toContain('"deletedBranch"');
    expect(await sql("SELECT count(*)::int AS n FROM todos WHERE NOT done")).toEqual([{ n: 2 }]);
    const branches = await api("GET", `/projects/${projectId}/branches`);
    expect(branches.branches.map((b: Json) => b.id)).not.toContain(tempBranch);
  });

  it("complete_query_tuning applies the index to main and drops the temporary branch", async () => {
    // prepare_query_tuning starts with EXPLAIN (ANALYZE, …, FILECACHE): Neon's fork only (README).
    const prepared = await callFailing("prepare_query_tuning", {
      projectId,
      databaseName: "neondb",
      sql: "SELECT * FROM todos WHERE title = 'ship'",
    });
    expect(prepared).toContain('unrecognized EXPLAIN option "filecache"');
    const branchesAfterPrepare = await api("GET", `/projects/${projectId}/branches`);
    expect(branchesAfterPrepare.branches).toHaveLength(1); // it cleaned its temporary branch up

    const made = await call("create_branch", { projectId, branchName: "tuning" });
    const temporaryBranchId = /Branch ID: (\S+)/.exec(made)?.[1] ?? "";
    // What prepare_query_tuning would have done there: the index tried on the copy.
    await sql("CREATE INDEX todos_title_idx ON todos (title)", { branchId: temporaryBranchId });
    const completed = JSON.parse(
      await call("complete_query_tuning", {
        projectId,
        databaseName: "neondb",
        tuningId: "00000000-0000-4000-8000-000000000000",
        temporaryBranchId,
        applyChanges: true,
        suggestedSqlStatements: ["CREATE INDEX todos_title_idx ON todos (title)"],
      }),
    );
    expect(completed.deletedBranches).toEqual([temporaryBranchId]);
    expect(await sql("SELECT indexname FROM pg_indexes WHERE indexname = 'todos_title_idx'")).toEqual([
      { indexname: "todos_title_idx" },
    ]);
    const branches = await api("GET", `/projects/${projectId}/branches`);
    expect(branches.branches.map((b: Json) => b.id)).not.toContain(temporaryBranchId);
  });

  it("list_slow_queries asks for pg_stat_statements, which the project's role creates as on Neon, then lists the queries", async () => {
    expect(await callFailing("list_slow_queries", { projectId })).toContain(
      "pg_stat_statements extension is not installed",
    );
    // Neon's computes preload the library and let neon_superuser's members create the extension.
    await call("run_sql", { projectId, sql: "CREATE EXTENSION pg_stat_statements" });
    await sql("SELECT count(*) FROM todos WHERE title LIKE 'w%'");
    const listed = JSON.parse(await call("list_slow_queries", { projectId, limit: 50 }));
    expect(listed.total_queries_found).toBe(listed.slow_queries.length);
    const probe = listed.slow_queries.find((q: Json) => q.query.includes("FROM todos WHERE title LIKE"));
    // bigint columns arrive as strings, as the serverless driver gives int8 from Neon.
    expect(probe).toMatchObject({ calls: "1", rows: "1" });
    expect(probe.mean_exec_time_ms).toBeGreaterThan(0);
  });

  it("provision_neon_auth reports that Neon Auth is not run here", async () => {
    const text = await callFailing("provision_neon_auth", { projectId });
    expect(text.toLowerCase()).toMatch(/not (enabled|available)/);
  });

  it("delete_project removes the project", async () => {
    await call("delete_project", { projectId });
    const listed = JSON.parse(await call("list_projects", {}));
    expect(listed.projects.map((p: Json) => p.id)).not.toContain(projectId);
  });

  it("every API response the MCP server received matches the public document", () => {
    expect(e2e.traffic.length).toBeGreaterThan(20);
    expect(publicContract().checkAll(e2e.traffic)).toEqual([]);
  });
});
