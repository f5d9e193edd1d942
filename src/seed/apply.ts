import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import type { Ctx } from "../context.js";
import type { BranchRow } from "../control-plane/access.js";
import { addAccount } from "../control-plane/accounts/service.js";
import { addApiKey, countKeys } from "../control-plane/api-keys/service.js";
import { addBranch } from "../control-plane/branches/service.js";
import { markReady } from "../control-plane/branches/store.js";
import { addEndpoint } from "../control-plane/endpoints/service.js";
import { recordState } from "../control-plane/endpoints/store.js";
import { settleProjectOperations } from "../control-plane/operations/store.js";
import { newProjectRow } from "../control-plane/projects/rules.js";
import { countProjects, insertProject, setLocked } from "../control-plane/projects/store.js";
import { addDatabase, addRole, dropWhatDataBrings } from "../control-plane/roles-databases/service.js";
import { findDatabase, originOf } from "../control-plane/roles-databases/store.js";
import type { PlanName } from "../plans.js";
import type { Tx } from "../platform/db.js";
import { IdGenerator, seededRandom } from "../platform/ids.js";
import { packageRoot } from "../platform/package-root.js";
import { SeedFile, type SeedProject } from "./schema.js";

export class SeedError extends Error {}

/** Reads and validates a seed file; every problem is named with its path in the file. */
export function readSeedFile(file: string): { seed: SeedFile; hash: string } {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new SeedError(`NEON_EMULATOR_SEED: cannot read ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SeedError(`NEON_EMULATOR_SEED: ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = SeedFile.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new SeedError(`NEON_EMULATOR_SEED: ${file} is not a valid seed:\n${lines.join("\n")}`);
  }
  return { seed: parsed.data, hash: createHash("sha256").update(text).digest("hex") };
}

function isEmpty(ctx: Ctx): boolean {
  return countProjects(ctx.db) === 0 && countKeys(ctx) === 0;
}

/**
 * A seeded project through the services' own building blocks: the project row as a project
 * create makes it, branches, roles, databases and endpoints (with the seed's ids where given),
 * then endpoint states and the operation history settled as the seed describes them.
 */
function seedProject(
  ctx: Ctx,
  tx: Tx,
  accountId: string,
  plan: PlanName,
  p: SeedProject,
  where: string,
): void {
  const now = ctx.clock.now(accountId);
  const project = newProjectRow({
    id: p.id ?? ctx.ids.projectId(),
    accountId,
    plan,
    domain: ctx.config.domain,
    now,
    input: {
      name: p.name,
      region_id: p.region_id,
      pg_version: p.pg_version,
      history_retention_seconds: p.history_retention_seconds,
    },
  });
  insertProject(tx, project);
  const defaults = p.branches.filter((b) => b.default);
  if (defaults.length > 1) throw new SeedError(`${where}: more than one branch is marked default`);
  const defaultName = (defaults[0] ?? p.branches[0])?.name;
  const byName = new Map<string, BranchRow>();
  p.branches.forEach((b, i) => {
    const at = `${where}.branches.${i}`;
    const parent = b.parent ? byName.get(b.parent) : undefined;
    if (b.parent && !parent) throw new SeedError(`${at}.parent: no earlier branch named "${b.parent}"`);
    if (b.name === defaultName && b.parent)
      throw new SeedError(`${at}: the default branch cannot have a parent`);
    if (b.name !== defaultName && !b.parent)
      throw new SeedError(`${at}.parent: required for a non-default branch`);
    if (byName.has(b.name)) throw new SeedError(`${at}.name: duplicate branch name "${b.name}"`);
    const branch = addBranch(ctx, tx, project, {
      ...(b.id ? { id: b.id } : {}),
      name: b.name,
      parentId: parent?.id ?? null,
      isDefault: b.name === defaultName,
      protected: b.protected,
      annotations: b.annotations,
    });
    byName.set(b.name, branch);
    markReady(tx, branch.id, now);
    for (const r of b.roles) addRole(ctx, tx, branch, { name: r.name, password: r.password });
    b.databases.forEach((d, j) => {
      if (!b.roles.some((r) => r.name === d.owner))
        throw new SeedError(`${at}.databases.${j}.owner: no role named "${d.owner}" on this branch`);
      // One its parent holds is that one's copy (the branch's data is its parent's): its origin.
      const copied = parent && findDatabase(tx, parent.id, d.name);
      addDatabase(ctx, tx, branch, {
        name: d.name,
        ownerName: d.owner,
        ...(copied ? { originId: originOf(copied) } : {}),
      });
    });
    dropWhatDataBrings(tx, branch);
    for (const e of b.endpoints) {
      const { endpoint } = addEndpoint(
        ctx,
        tx,
        plan,
        project,
        branch.id,
        {
          type: e.type,
          autoscaling_limit_min_cu: e.min_cu,
          autoscaling_limit_max_cu: e.max_cu,
          suspend_timeout_seconds: e.suspend_timeout_seconds,
          disabled: e.disabled,
          pooler_enabled: e.pooler_enabled,
          name: e.name,
        },
        e.id,
      );
      // Settled as the seed says: started at `now`, and suspended at once when it is to be idle.
      const settle = { id: endpoint.id, pending: null, now } as const;
      recordState(tx, { ...settle, next: "active", started: true, suspended: false });
      if (e.state !== "active" || e.disabled)
        recordState(tx, { ...settle, next: "idle", started: false, suspended: true });
    }
  });
  settleProjectOperations(tx, project.id, p.history, now);
  if (p.locked) setLocked(tx, project.id, true);
}

/**
 * Applies a seed to an empty database in one transaction (all or nothing). A database that
 * already holds projects or keys is left as it is.
 */
export interface GeneratedKey {
  account: string;
  name: string;
  key: string;
}

/** The demo seed shipped with the emulator. */
export function demoSeedFile(): string {
  return path.join(packageRoot(), "src", "seed", "demo.json");
}

export function applySeedFile(ctx: Ctx, file: string, logger?: Logger): GeneratedKey[] | null {
  const { seed, hash } = readSeedFile(file);
  if (!isEmpty(ctx)) {
    logger?.debug({ file }, "database is not empty; seed not applied");
    return null;
  }
  const generated: GeneratedKey[] = [];
  // Ids and keys come from a deterministic source for the seed only.
  const seeded: Ctx = { ...ctx, ids: new IdGenerator(seededRandom(seed.seed ?? hash)) };
  const defaults = seed.accounts.filter((a) => a.default);
  if (defaults.length > 1) throw new SeedError("NEON_EMULATOR_SEED: more than one account is marked default");
  ctx.db.transaction((tx) => {
    seed.accounts.forEach((a, i) => {
      const account = addAccount(seeded, tx, {
        ...(a.id ? { id: a.id } : {}),
        name: a.name,
        email: a.email,
        plan: a.plan ?? ctx.config.plan,
        isDefault: a.default ?? (defaults.length === 0 && i === 0),
      });
      for (const k of a.keys) {
        const { key } = addApiKey(seeded, tx, account.id, k.name, k.key);
        if (!k.key) generated.push({ account: a.email, name: k.name, key });
      }
      a.projects.forEach((p, j) => {
        seedProject(seeded, tx, account.id, account.plan, p, `accounts.${i}.projects.${j}`);
      });
    });
  });
  logger?.info({ file, accounts: seed.accounts.length }, "seed applied");
  return generated;
}
