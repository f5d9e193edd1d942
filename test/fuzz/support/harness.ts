import type Database from "better-sqlite3";
import pino from "pino";
import { createApp } from "../../../src/app.js";
import type { Ctx } from "../../../src/context.js";
import { ensureDefaultAccount } from "../../../src/control-plane/accounts/service.js";
import { createApiKey } from "../../../src/control-plane/api-keys/service.js";
import { ManualClock } from "../../../src/platform/clock.js";
import { openStorage } from "../../../src/platform/db.js";
import { IdGenerator } from "../../../src/platform/ids.js";
import { Worker } from "../../../src/worker/loop.js";
import { testConfig } from "../../helpers/app.js";
import { type RealKind, realKindOf } from "./arbitraries.js";

/**
 * An in-process app for the fuzz and security suites, like test/helpers/app.ts but exposing the
 * Hono app itself (so a request can go without a content type), two accounts with keys and
 * objects, and a snapshot of every table to prove a rejected request changed nothing.
 */

export const CLOCK_START = Date.parse("2025-01-01T00:00:00Z");
export const MAX_BODY_BYTES = 64 * 1024;

export interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are checked field by field
  body: any;
  text: string;
  headers: Headers;
}

export interface Account {
  id: string;
  orgId: string;
  email: string;
  /** The key requests of this account are made with; re-minted if a request revoked it. */
  key: string;
  keyId: number;
}

export class FuzzApp {
  readonly ctx: Ctx;
  readonly sqlite: Database.Database;
  readonly app: ReturnType<typeof createApp>;
  readonly worker: Worker;
  a!: Account;
  b!: Account;
  /** A second active key of account A, and a revoked one. */
  secondary!: { key: string; id: number };
  revoked!: { key: string; id: number };
  /** Numbers the objects validRequest makes, so their names never collide. */
  private serial = 0;
  private readonly env = { incoming: { socket: { remoteAddress: "::ffff:127.0.0.1" } } };

  constructor() {
    const storage = openStorage(":memory:");
    this.sqlite = storage.sqlite;
    this.ctx = {
      db: storage.db,
      clock: new ManualClock(CLOCK_START),
      ids: new IdGenerator(),
      config: testConfig({
        maxBodyBytes: MAX_BODY_BYTES,
        // Long enough that a long clock advance creates a handful of checks, not thousands.
        checkIntervalSeconds: 30 * 86400,
        projectRecoverySeconds: 7 * 86400,
      }),
    };
    const worker = new Worker(this.ctx);
    this.worker = worker;
    this.app = createApp(this.ctx, { logger: pino({ level: "silent" }), worker });
  }

  static async create(): Promise<FuzzApp> {
    const f = new FuzzApp();
    await f.setUp();
    return f;
  }

  /** Sends a request exactly as given: no header is added. */
  async send(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
    const req: RequestInit = { method, headers: init.headers ?? {} };
    if (init.body !== undefined && method !== "GET" && method !== "HEAD") req.body = init.body;
    const res = await this.app.request(path, req, this.env);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the caller asserts on the text
    }
    return { status: res.status, body, text, headers: res.headers } as Reply;
  }

  /** A JSON request with a key (account A's by default). */
  api(method: string, path: string, body?: unknown, key = this.a.key): Promise<Reply> {
    return this.send(method, path, {
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  private async setUp(): Promise<void> {
    const account = ensureDefaultAccount(this.ctx);
    this.a = { id: account.id, orgId: account.orgId, email: account.email, ...this.mint(account.id) };
    const other = await this.api("POST", "/_emulator/accounts", { name: "Other" });
    expectOk(other, 201);
    this.b = {
      id: other.body.account.id,
      orgId: other.body.account.org_id,
      email: other.body.account.email,
      key: other.body.key.key,
      keyId: other.body.key.id,
    };
    await this.touch(this.b.key);
    const second = await this.api("POST", "/api/v2/api_keys", { key_name: "secondary" });
    expectOk(second, 200);
    this.secondary = { key: second.body.key, id: second.body.id };
    await this.touch(this.secondary.key);
    const doomed = await this.api("POST", "/api/v2/api_keys", { key_name: "revoked" });
    await this.touch(doomed.body.key);
    expectOk(await this.api("DELETE", `/api/v2/api_keys/${doomed.body.id}`), 200);
    this.revoked = { key: doomed.body.key, id: doomed.body.id };
    await this.ensure();
  }

  /** A key minted straight in the repository, used once so its last_used_from_addr is already set. */
  private mint(accountId: string): { key: string; keyId: number } {
    const k = createApiKey(this.ctx, accountId, "fuzz");
    this.sqlite
      .prepare("UPDATE api_keys SET last_used_from_addr = '127.0.0.1', last_used_at = ? WHERE id = ?")
      .run(CLOCK_START, k.id);
    return { key: k.key, keyId: k.id };
  }

  private async touch(key: string) {
    expectOk(await this.send("GET", "/api/v2/auth", { headers: { authorization: `Bearer ${key}` } }), 200);
  }

  private activeKey(id: number): boolean {
    return (
      this.sqlite.prepare("SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL").get(id) !== undefined
    );
  }

  /**
   * Restores what a successful request may have taken away (a revoked key, a deleted project,
   * branch, endpoint, role or database), so every case has real objects to aim at.
   */
  async ensure(): Promise<void> {
    for (const acc of [this.a, this.b]) if (!this.activeKey(acc.keyId)) Object.assign(acc, this.mint(acc.id));
    if (!this.activeKey(this.secondary.id)) {
      const k = this.mint(this.a.id);
      this.secondary = { key: k.key, id: k.keyId };
    }
    for (const acc of [this.a, this.b]) {
      const count = (sql: string) => (this.sqlite.prepare(sql).get(acc.id) as { n: number }).n;
      if (count("SELECT count(*) AS n FROM projects WHERE account_id = ?") === 0)
        expectOk(await this.api("POST", "/api/v2/projects", { project: { name: "fixture" } }, acc.key), 201);
      const project = this.sqlite
        .prepare("SELECT id FROM projects WHERE account_id = ? ORDER BY created_at, id LIMIT 1")
        .get(acc.id) as { id: string };
      if (count("SELECT count(*) AS n FROM branches WHERE account_id = ?") < 2)
        expectOk(await this.api("POST", `/api/v2/projects/${project.id}/branches`, {}, acc.key), 201);
      if (count("SELECT count(*) AS n FROM endpoints WHERE account_id = ?") === 0) {
        const free = this.sqlite
          .prepare(
            "SELECT id FROM branches b WHERE project_id = ? AND NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.branch_id = b.id)",
          )
          .get(project.id) as { id: string } | undefined;
        const branchId =
          free?.id ??
          (await this.api("POST", `/api/v2/projects/${project.id}/branches`, {}, acc.key)).body.branch.id;
        expectOk(
          await this.api(
            "POST",
            `/api/v2/projects/${project.id}/endpoints`,
            { endpoint: { branch_id: branchId, type: "read_write" } },
            acc.key,
          ),
          201,
        );
      }
      if (count("SELECT count(*) AS n FROM roles WHERE account_id = ?") === 0) {
        const branch = this.sqlite
          .prepare("SELECT id FROM branches WHERE project_id = ? LIMIT 1")
          .get(project.id) as {
          id: string;
        };
        expectOk(
          await this.api(
            "POST",
            `/api/v2/projects/${project.id}/branches/${branch.id}/roles`,
            { role: { name: "fixture_owner" } },
            acc.key,
          ),
          201,
        );
      }
      if (count("SELECT count(*) AS n FROM snapshots WHERE account_id = ?") === 0) {
        // A snapshot of the default branch, written as the API stores one (taking one through the
        // API would wait for the branch to be made).
        const branch = this.sqlite
          .prepare("SELECT id FROM branches WHERE project_id = ? AND is_default")
          .get(project.id) as { id: string };
        this.sqlite
          .prepare(
            `INSERT INTO snapshots (id, account_id, project_id, source_branch_id, name, taken_at, created_at, catalog)
             VALUES (?, ?, ?, ?, 'fixture', ?, ?, '{"roles":[],"databases":[]}')`,
          )
          .run(`snap-fixture-${++this.serial}`, acc.id, project.id, branch.id, CLOCK_START, CLOCK_START);
      }
      if (count("SELECT count(*) AS n FROM databases WHERE account_id = ?") === 0) {
        const role = this.sqlite
          .prepare("SELECT branch_id, name FROM roles WHERE project_id = ? LIMIT 1")
          .get(project.id) as { branch_id: string; name: string } | undefined;
        if (role)
          expectOk(
            await this.api(
              "POST",
              `/api/v2/projects/${project.id}/branches/${role.branch_id}/databases`,
              { database: { name: "fixturedb", owner_name: role.name } },
              acc.key,
            ),
            201,
          );
      }
    }
    this.settleBranches();
  }

  /** Branches still being made answer 423 to changes: lets their operations finish. */
  private settleBranches(): void {
    const making = this.sqlite
      .prepare(
        "SELECT DISTINCT account_id AS id FROM operations WHERE action IN ('create_branch', 'create_timeline') AND status IN ('scheduling', 'running')",
      )
      .all() as { id: string }[];
    for (const account of making) this.worker.advance(account.id, 5);
  }

  /**
   * Real values of each kind, consistent with one another (the branch is in the project, the
   * role and database on the branch), chosen with `pick` so a case is reproducible.
   */
  realValues(pick: number): Record<RealKind, string> {
    const choose = <T>(rows: T[], fallback: T): T =>
      rows.length ? (rows[pick % rows.length] as T) : fallback;
    const forAccount = (acc: Account) => {
      const project = choose(
        this.sqlite.prepare("SELECT id FROM projects WHERE account_id = ? ORDER BY rowid").all(acc.id) as {
          id: string;
        }[],
        { id: "no-project" },
      ).id;
      const branch = choose(
        this.sqlite.prepare("SELECT id FROM branches WHERE project_id = ? ORDER BY rowid").all(project) as {
          id: string;
        }[],
        { id: "br-none" },
      ).id;
      const endpoint = choose(
        this.sqlite
          .prepare("SELECT id FROM endpoints WHERE project_id = ? ORDER BY branch_id = ? DESC, rowid")
          .all(project, branch) as { id: string }[],
        { id: "ep-none" },
      ).id;
      const role = choose(
        this.sqlite.prepare("SELECT name FROM roles WHERE branch_id = ? ORDER BY rowid").all(branch) as {
          name: string;
        }[],
        { name: "neondb_owner" },
      ).name;
      const database = choose(
        this.sqlite.prepare("SELECT name FROM databases WHERE branch_id = ? ORDER BY id").all(branch) as {
          name: string;
        }[],
        { name: "neondb" },
      ).name;
      const operation = choose(
        this.sqlite
          .prepare("SELECT id FROM operations WHERE project_id = ? ORDER BY created_us")
          .all(project) as {
          id: string;
        }[],
        { id: "00000000-0000-4000-8000-000000000000" },
      ).id;
      const snapshot = choose(
        this.sqlite.prepare("SELECT id FROM snapshots WHERE project_id = ? ORDER BY rowid").all(project) as {
          id: string;
        }[],
        { id: "snap-none" },
      ).id;
      return { project, branch, endpoint, role, database, operation, snapshot };
    };
    const a = forAccount(this.a);
    const b = forAccount(this.b);
    const keyIds = [this.secondary.id, this.revoked.id];
    return {
      project_id: a.project,
      branch_id: a.branch,
      endpoint_id: a.endpoint,
      role_name: a.role,
      database_name: a.database,
      operation_id: a.operation,
      key_id: String(keyIds[pick % keyIds.length]),
      org_id: this.a.orgId,
      source_org_id: this.a.orgId,
      member_id: (
        this.sqlite
          .prepare("SELECT id FROM org_members WHERE org_account_id = ? ORDER BY rowid")
          .get(this.a.id) as {
          id: string;
        }
      ).id,
      snapshot_id: a.snapshot,
      foreign_project_id: b.project,
      foreign_branch_id: b.branch,
      foreign_endpoint_id: b.endpoint,
      foreign_key_id: String(this.b.keyId),
    };
  }

  /**
   * A request account A may make to `op` that the API accepts: path ids of objects that exist,
   * the body `validBody` gives, and for the operations random cases rarely get right (they need an
   * object in a particular state, or a query the plan and clock allow) that object made first.
   */
  async validRequest(op: OpenApiOperation, pick: number): Promise<{ url: string; body?: unknown }> {
    const ids = this.realValues(pick);
    const org = this.a.orgId;
    const made = async (method: string, path: string, body: unknown, key = this.a.key) => {
      const res = await this.api(method, path, body, key);
      if (res.status >= 300) throw new Error(`fixture ${method} ${path}: HTTP ${res.status}: ${res.text}`);
      return res.body;
    };
    const project = `/api/v2/projects/${ids.project_id}`;
    const serial = ++this.serial;
    const vpc = async () => {
      const id = `vpce-fuzz${serial}`;
      await made(
        "POST",
        `/api/v2/organizations/${org}/vpc/region/${this.regionOf(ids.project_id)}/vpc_endpoints/${id}`,
        { label: "fuzz" },
      );
      return id;
    };
    const consumption = (extra: string) => {
      const now = this.ctx.clock.now(this.a.id);
      const window = `from=${new Date(now - 2 * 86_400_000).toISOString()}&to=${new Date(now).toISOString()}&granularity=daily`;
      return `/api/v2${op.path.slice("/api/v2".length)}?${window}${extra}`;
    };
    switch (op.operationId) {
      case "revokeOrgApiKey": {
        const key = await made("POST", `/api/v2/organizations/${org}/api_keys`, { key_name: "fuzz" });
        return { url: `/api/v2/organizations/${org}/api_keys/${key.id}` };
      }
      case "recoverProject": {
        const created = await made("POST", "/api/v2/projects", { project: { name: "fuzz-deleted" } });
        await made("DELETE", `/api/v2/projects/${created.project.id}`, undefined);
        return { url: `/api/v2/projects/${created.project.id}/recover` };
      }
      case "restoreProjectBranch": {
        const child = await made("POST", `${project}/branches`, {});
        this.settleBranches();
        const source = this.defaultBranchOf(ids.project_id);
        return {
          url: `${project}/branches/${child.branch.id}/restore`,
          body: { source_branch_id: source, preserve_under_name: `preserved-${serial}` },
        };
      }
      case "finalizeRestoreBranch": {
        let snapshot = ids.snapshot_id;
        if (snapshot === "snap-none") {
          // A project made by an earlier request has no fixture snapshot: one is taken of it.
          this.settleBranches();
          const taken = await made(
            "POST",
            `${project}/branches/${this.defaultBranchOf(ids.project_id)}/snapshot`,
            undefined,
          );
          snapshot = taken.snapshot.id;
        }
        const restored = await made("POST", `${project}/snapshots/${snapshot}/restore`, {
          name: `restored-${serial}`,
        });
        return { url: `${project}/branches/${restored.branch.id}/finalize_restore`, body: {} };
      }
      case "removeOrganizationMember": {
        await made("POST", `/api/v2/organizations/${org}/invitations`, {
          invitations: [{ email: this.b.email, role: "member" }],
        });
        // The invitation names an email, which other accounts made by earlier requests may share:
        // whichever joined, any member but A itself can go.
        const member = this.sqlite
          .prepare("SELECT id FROM org_members WHERE org_account_id = ? AND user_id != ? ORDER BY rowid")
          .get(this.a.id, this.a.id) as { id: string };
        return { url: `/api/v2/organizations/${org}/members/${member.id}` };
      }
      case "transferProjectsFromOrgToOrg":
      case "transferProjectsFromUserToOrg": {
        await made(
          "POST",
          `/api/v2/organizations/${this.b.orgId}/invitations`,
          { invitations: [{ email: this.a.email, role: "member" }] },
          this.b.key,
        );
        const created = await made("POST", "/api/v2/projects", { project: { name: "fuzz-moving" } });
        this.settleBranches();
        return {
          url: op.path.replace("{source_org_id}", org),
          body: validBody(op, { ...ids, project_id: created.project.id }, this.b.orgId),
        };
      }
      case "acceptProjectTransferRequest": {
        const offered = `/api/v2/projects/${ids.foreign_project_id}/transfer_requests`;
        const request = await made("POST", offered, {}, this.b.key);
        return { url: `${offered}/${request.id}`, body: {} };
      }
      case "revokePermissionFromProject": {
        const grant = await made("POST", `${project}/permissions`, { email: `fuzz${serial}@example.com` });
        return { url: `${project}/permissions/${grant.id}` };
      }
      case "deleteProjectJWKS": {
        const added = await made(
          "POST",
          `${project}/jwks`,
          validBody({ ...op, operationId: "addProjectJWKS" }, ids, org),
        );
        return { url: `${project}/jwks/${added.jwks.id}` };
      }
      case "assignOrganizationVPCEndpoint":
        return {
          url: `/api/v2/organizations/${org}/vpc/region/${this.regionOf(ids.project_id)}/vpc_endpoints/vpce-fuzz${serial}`,
          body: validBody(op, ids, org),
        };
      case "getOrganizationVPCEndpointDetails":
      case "deleteOrganizationVPCEndpoint":
        return {
          url: `/api/v2/organizations/${org}/vpc/region/${this.regionOf(ids.project_id)}/vpc_endpoints/${await vpc()}`,
        };
      case "assignProjectVPCEndpoint":
        return { url: `${project}/vpc_endpoints/${await vpc()}`, body: validBody(op, ids, org) };
      case "deleteProjectVPCEndpoint": {
        const id = await vpc();
        await made("POST", `${project}/vpc_endpoints/${id}`, { label: "fuzz" });
        return { url: `${project}/vpc_endpoints/${id}` };
      }
      case "getConsumptionHistoryPerProject":
        return { url: consumption("") };
      case "getConsumptionHistoryPerProjectV2":
        return { url: consumption(`&org_id=${org}&metrics=compute_unit_seconds`) };
      case "getConsumptionHistoryPerBranchV2":
        return {
          url: consumption(`&org_id=${org}&metrics=compute_unit_seconds&project_ids=${ids.project_id}`),
        };
      default: {
        const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
          const kind = realKindOf(name);
          return encodeURIComponent(kind ? ids[kind] : (FIXED_PARAMS[name] ?? name));
        });
        const body = validBody(op, ids, org);
        return body === undefined ? { url: path } : { url: path, body };
      }
    }
  }

  private regionOf(projectId: string): string {
    return (
      this.sqlite.prepare("SELECT region_id AS r FROM projects WHERE id = ?").get(projectId) as { r: string }
    ).r;
  }

  private defaultBranchOf(projectId: string): string {
    return (
      this.sqlite.prepare("SELECT id FROM branches WHERE project_id = ? AND is_default").get(projectId) as {
        id: string;
      }
    ).id;
  }

  /** Every row of every table (api_keys.last_used_at excepted: a successful authentication sets it), in a stable order. */
  snapshot(): Map<string, string> {
    const tables = this.sqlite
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_\\_drizzle%' ESCAPE '\\' ORDER BY name",
      )
      .all() as { name: string }[];
    const out = new Map<string, string>();
    for (const { name } of tables) {
      const cols = (this.sqlite.pragma(`table_info("${name}")`) as { name: string }[])
        .map((c) => c.name)
        .filter((c) => !(name === "api_keys" && c === "last_used_at"));
      const rows = this.sqlite
        .prepare(`SELECT ${cols.map((c) => `"${c}"`).join(", ")} FROM "${name}" ORDER BY rowid`)
        .raw()
        .all();
      out.set(name, JSON.stringify(rows));
    }
    return out;
  }

  /**
   * Rules that hold whatever requests came before: foreign keys, one default branch per
   * project, objects inside their own project and account, and each endpoint's pending_state
   * derived from its unfinished operations. Returns what is broken.
   */
  invariants(): string[] {
    const broken: string[] = [];
    const rows = (sql: string) => this.sqlite.prepare(sql).all() as Record<string, unknown>[];
    const fk = rows("PRAGMA foreign_key_check");
    if (fk.length) broken.push(`foreign keys: ${JSON.stringify(fk)}`);
    const defaults = rows(
      `SELECT p.id, (SELECT count(*) FROM branches b WHERE b.project_id = p.id AND b.is_default) AS n
       FROM projects p WHERE n != 1`,
    );
    if (defaults.length) broken.push(`default branches: ${JSON.stringify(defaults)}`);
    const strays = rows(
      `SELECT 'endpoint' AS kind, e.id FROM endpoints e JOIN branches b ON b.id = e.branch_id
         WHERE b.project_id != e.project_id OR b.account_id != e.account_id
       UNION ALL SELECT 'branch', b.id FROM branches b JOIN projects p ON p.id = b.project_id
         WHERE p.account_id != b.account_id
       UNION ALL SELECT 'role', r.name FROM roles r JOIN branches b ON b.id = r.branch_id
         WHERE b.project_id != r.project_id OR b.account_id != r.account_id
       UNION ALL SELECT 'database', d.name FROM databases d JOIN branches b ON b.id = d.branch_id
         WHERE b.project_id != d.project_id OR b.account_id != d.account_id
       UNION ALL SELECT 'parent', b.id FROM branches b JOIN branches p ON p.id = b.parent_id
         WHERE p.project_id != b.project_id`,
    );
    if (strays.length) broken.push(`objects outside their project or account: ${JSON.stringify(strays)}`);
    const pending = rows(
      `SELECT e.id, e.pending_state AS recorded,
         (SELECT CASE o.action WHEN 'start_compute' THEN 'active' ELSE 'idle' END FROM operations o
           WHERE o.endpoint_id = e.id AND o.status IN ('scheduling', 'running')
             AND o.action IN ('start_compute', 'suspend_compute')
           ORDER BY o.created_us DESC LIMIT 1) AS derived
       FROM endpoints e WHERE e.pending_state IS NOT derived`,
    );
    if (pending.length) broken.push(`pending_state out of step with operations: ${JSON.stringify(pending)}`);
    return broken;
  }

  close(): void {
    this.worker.stop();
    this.sqlite.close();
  }
}

/** Names the tables whose contents differ between two snapshots. */
export function changedTables(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => before.get(n) !== after.get(n));
}

/** Path parameters that name no object of an account. */
export const FIXED_PARAMS: Record<string, string> = {
  region_id: "aws-us-east-2",
  vpc_endpoint_id: "vpce-sweep",
};

/**
 * A request body `op` accepts from the owner of the objects `ids` names; transfers go to
 * `destinationOrgId`.
 */
export function validBody(
  op: OpenApiOperation,
  ids: Record<RealKind, string>,
  destinationOrgId: string,
): unknown {
  switch (op.operationId) {
    case "createApiKey":
    case "createOrgApiKey":
      return { key_name: "valid" };
    case "addProjectJWKS":
      return { jwks_url: "https://valid.example/jwks.json", provider_name: "valid" };
    case "assignOrganizationVPCEndpoint":
    case "assignProjectVPCEndpoint":
      return { label: "valid" };
    case "setOrganizationSpendingLimit":
      return { spending_limit_cents: 100 };
    case "grantPermissionToProject":
      return { email: "valid@example.com" };
    case "updateOrganizationMember":
      return { role: "admin" };
    case "createOrganizationInvitations":
      return { invitations: [{ email: "valid@example.com", role: "member" }] };
    case "transferProjectsFromOrgToOrg":
    case "transferProjectsFromUserToOrg":
      return { destination_org_id: destinationOrgId, project_ids: [ids.project_id] };
    case "createProject":
      return { project: { name: "valid" } };
    case "updateProject":
      return { project: { name: "renamed" } };
    case "createProjectBranch":
    case "updateProjectBranch":
      return { branch: { name: "renamed" } };
    case "createProjectEndpoint":
      return { endpoint: { branch_id: ids.branch_id, type: "read_only" } };
    case "updateProjectEndpoint":
      return { endpoint: { suspend_timeout_seconds: 60 } };
    case "createProjectBranchRole":
      return { role: { name: "valid_role" } };
    case "createProjectBranchDatabase":
      return { database: { name: "renamed", owner_name: ids.role_name } };
    case "updateProjectBranchDatabase":
      return { database: { name: "renamed" } };
    case "updateSnapshot":
      return { snapshot: { name: "renamed" } };
    case "setSnapshotSchedule":
      return { schedule: [{ frequency: "daily" }] };
    case "restoreProjectBranch":
      return { source_branch_id: ids.branch_id, preserve_under_name: "preserved" };
    default:
      if (op.path.startsWith("/api/v2/projects/auth/")) return { project_id: ids.project_id };
      if (op.path === "/_emulator/clock/advance") return { seconds: 1 };
      if (op.path === "/_emulator/faults" && op.method === "POST") return { action: "start_compute" };
      return op.body ? {} : undefined;
  }
}

export function expectOk(res: Reply, status: number): void {
  if (res.status !== status)
    throw new Error(`fixture setup: expected HTTP ${status}, got ${res.status}: ${res.text}`);
}

export interface OpenApiOperation {
  method: string;
  path: string;
  operationId?: string;
  parameters: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[];
  body?: { required: boolean; schema: Record<string, unknown> };
}

/** Every operation of the served OpenAPI document. */
export async function operationsOf(
  f: FuzzApp,
): Promise<{ doc: Record<string, unknown>; ops: OpenApiOperation[] }> {
  // Two documents (Neon's routes, the emulator's own), each with its base path in `servers`.
  const doc = {
    paths: {} as Record<string, unknown>,
    components: { schemas: {} as Record<string, unknown> },
  };
  const ops: OpenApiOperation[] = [];
  for (const url of ["/openapi.json", "/_emulator/openapi.json"]) {
    const res = await f.send("GET", url);
    expectOk(res, 200);
    const part = res.body as {
      servers: { url: string }[];
      paths: Record<
        string,
        Record<
          string,
          {
            operationId?: string;
            parameters?: OpenApiOperation["parameters"];
            requestBody?: {
              required?: boolean;
              content?: Record<string, { schema: Record<string, unknown> }>;
            };
          }
        >
      >;
      components?: { schemas?: Record<string, unknown> };
    };
    const base = part.servers[0]?.url ?? "";
    Object.assign(doc.components.schemas, part.components?.schemas);
    for (const [relative, methods] of Object.entries(part.paths)) {
      const path = `${base}${relative}`;
      doc.paths[path] = methods;
      for (const [method, op] of Object.entries(methods)) {
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        ops.push({
          method: method.toUpperCase(),
          path,
          ...(op.operationId ? { operationId: op.operationId } : {}),
          parameters: op.parameters ?? [],
          ...(schema ? { body: { required: op.requestBody?.required ?? false, schema } } : {}),
        });
      }
    }
  }
  return { doc, ops };
}
