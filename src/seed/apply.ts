import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import type { Logger } from "pino";
import type { Ctx } from "../context.js";
import type { Tx } from "../db/client.js";
import { apiKeys, branches, endpoints, operations, projects } from "../db/schema/index.js";
import { hashKey, IdGenerator, seededRandom } from "../domain/ids.js";
import { DEFAULT_REGION, proxyHost } from "../domain/regions.js";
import { packageRoot } from "../lib/package-root.js";
import { insertAccount } from "../repos/accounts.js";
import { type BranchRow, insertBranch } from "../repos/branches.js";
import { insertEndpoint } from "../repos/endpoints.js";
import type { ProjectRow } from "../repos/projects.js";
import { insertDatabase, insertRole } from "../repos/roles-databases.js";
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
  const n = (t: typeof projects | typeof apiKeys) =>
    ctx.db.select({ n: sql<number>`count(*)` }).from(t).get()?.n ?? 0;
  return n(projects) === 0 && n(apiKeys) === 0;
}

/** Marks the operations a seeded project's creation started as finished long ago, and settles states. */
function settle(tx: Tx, projectId: string, keepHistory: boolean, pastMs: number): void {
  if (!keepHistory) {
    tx.delete(operations).where(eq(operations.projectId, projectId)).run();
    return;
  }
  tx.update(operations)
    .set({ status: "finished", dueAt: null, totalDurationMs: 1200, updatedAt: pastMs })
    .where(eq(operations.projectId, projectId))
    .run();
}

function seedProject(
  ctx: Ctx,
  tx: Tx,
  accountId: string,
  plan: "paid" | "free",
  p: SeedProject,
  where: string,
): void {
  const now = ctx.clock.now();
  const regionId = p.region_id ?? DEFAULT_REGION;
  const project: ProjectRow = {
    id: p.id ?? ctx.ids.projectId(),
    accountId,
    name: p.name,
    regionId,
    pgVersion: p.pg_version ?? 17,
    platformId: regionId.split("-")[0] as string,
    provisioner: "k8s-neonvm",
    proxyHost: proxyHost(regionId, ctx.config.domain),
    cpuUsedSec: 0,
    branchLogicalSizeLimit: plan === "free" ? 512 : 5_242_880,
    historyRetentionSeconds: p.history_retention_seconds ?? 86_400,
    storePasswords: true,
    locked: false,
    creationSource: "console",
    defaultEndpointSettings: {},
    settings: {},
    computeLastActiveAt: null,
    createdAt: now,
    updatedAt: now,
  };
  tx.insert(projects).values(project).run();
  const defaults = p.branches.filter((b) => b.default);
  if (defaults.length > 1) throw new SeedError(`${where}: more than one branch is marked default`);
  const defaultName = (defaults[0] ?? p.branches[0])?.name;
  const byName = new Map<string, BranchRow>();
  const account = { id: accountId, plan } as Parameters<typeof insertEndpoint>[2];
  p.branches.forEach((b, i) => {
    const at = `${where}.branches.${i}`;
    const parent = b.parent ? byName.get(b.parent) : undefined;
    if (b.parent && !parent) throw new SeedError(`${at}.parent: no earlier branch named "${b.parent}"`);
    if (b.name === defaultName && b.parent)
      throw new SeedError(`${at}: the default branch cannot have a parent`);
    if (b.name !== defaultName && !b.parent)
      throw new SeedError(`${at}.parent: required for a non-default branch`);
    if (byName.has(b.name)) throw new SeedError(`${at}.name: duplicate branch name "${b.name}"`);
    const branch = insertBranch(ctx, tx, project, {
      ...(b.id ? { id: b.id } : {}),
      name: b.name,
      parentId: parent?.id ?? null,
      isDefault: b.name === defaultName,
      protected: b.protected,
      annotations: b.annotations,
    });
    byName.set(b.name, branch);
    tx.update(branches)
      .set({ currentState: "ready", pendingState: null })
      .where(eq(branches.id, branch.id))
      .run();
    for (const r of b.roles)
      insertRole(ctx, tx, branch, { name: r.name, ...(r.password ? { password: r.password } : {}) });
    b.databases.forEach((d, j) => {
      if (!b.roles.some((r) => r.name === d.owner))
        throw new SeedError(`${at}.databases.${j}.owner: no role named "${d.owner}" on this branch`);
      insertDatabase(ctx, tx, branch, { name: d.name, ownerName: d.owner });
    });
    for (const e of b.endpoints) {
      const created = insertEndpoint(ctx, tx, account, project, branch, {
        type: e.type,
        autoscaling_limit_min_cu: e.min_cu,
        autoscaling_limit_max_cu: e.max_cu,
        suspend_timeout_seconds: e.suspend_timeout_seconds,
        disabled: e.disabled,
        pooler_enabled: e.pooler_enabled,
        name: e.name,
      });
      const id = e.id ?? created.endpoint.id;
      const active = e.state === "active" && !e.disabled;
      tx.update(endpoints)
        .set({
          id,
          host: created.endpoint.host.replace(created.endpoint.id, id),
          currentState: active ? "active" : "idle",
          pendingState: null,
          lastActive: now,
          startedAt: now,
          suspendedAt: active ? null : now,
        })
        .where(eq(endpoints.id, created.endpoint.id))
        .run();
      tx.update(operations)
        .set({ endpointId: id })
        .where(eq(operations.endpointId, created.endpoint.id))
        .run();
    }
  });
  settle(tx, project.id, p.history, now);
  if (p.locked) tx.update(projects).set({ locked: true }).where(eq(projects.id, project.id)).run();
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
      const account = insertAccount(seeded, tx, {
        ...(a.id ? { id: a.id } : {}),
        name: a.name,
        email: a.email,
        plan: a.plan ?? ctx.config.plan,
        isDefault: a.default ?? (defaults.length === 0 && i === 0),
      });
      for (const k of a.keys) {
        const key = k.key ?? seeded.ids.apiKey();
        if (!k.key) generated.push({ account: a.email, name: k.name, key });
        tx.insert(apiKeys)
          .values({
            accountId: account.id,
            name: k.name,
            keyHash: hashKey(key),
            createdAt: ctx.clock.now(),
            createdBy: account.id,
          })
          .run();
      }
      a.projects.forEach((p, j) => {
        seedProject(seeded, tx, account.id, account.plan, p, `accounts.${i}.projects.${j}`);
      });
    });
  });
  logger?.info({ file, accounts: seed.accounts.length }, "seed applied");
  return generated;
}
