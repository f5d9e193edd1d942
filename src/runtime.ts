import os from "node:os";
import path from "node:path";
import pino, { type Logger } from "pino";
import { createApp } from "./app.js";
import type { ComputeDriver } from "./compute/driver.js";
import { noneDriver } from "./compute/none.js";
import { findBinaries, InstalledBinaries, installCommand } from "./compute/postgres/binaries.js";
import { type ComputeAddress, PostgresDriver } from "./compute/postgres/driver.js";
import type { Config, Ctx } from "./context.js";
import { ensureDefaultAccount } from "./control-plane/accounts/service.js";
import { countKeys, createApiKey, ensureApiKey } from "./control-plane/api-keys/service.js";
import { historyKeptSince } from "./control-plane/branches/history.js";
import {
  findLoginTarget,
  recordClientConnection,
  resetClientConnections,
  suspendUnstarted,
  wakeForConnection,
  wakeOutcome,
} from "./control-plane/endpoints/service.js";
import { DEFAULT_OPERATION_MS } from "./control-plane/operations/rules.js";
import { proxyHost, REGION_IDS } from "./control-plane/regions/rules.js";
import { dropsApplied, syncServerCatalog } from "./control-plane/roles-databases/service.js";
import { MANUAL_CLOCK_KEY, readAccountClocks, readState, writeState } from "./emulator/state-store.js";
import { type Env, EnvError } from "./env.js";
import { loadTlsIdentity } from "./front-door/certificates.js";
import { EgressMeter } from "./front-door/egress.js";
import { FrontDoor } from "./front-door/server.js";
import { type DoorServices, TEXTS } from "./front-door/session.js";
import { SqlOverHttp } from "./front-door/sql-over-http.js";
import { DoorError } from "./front-door/wire.js";
import { type Clock, ManualClock, RealClock, wallNow } from "./platform/clock.js";
import { openStorage, type Storage } from "./platform/db.js";
import { hashKey, IdGenerator } from "./platform/ids.js";
import { requireFromPackage } from "./platform/package-root.js";
import { NEON_RATE_LIMITS } from "./platform/rate-limiter.js";
import { applySeedFile, demoSeedFile, type GeneratedKey } from "./seed/apply.js";
import { Worker } from "./worker/loop.js";
import { Metering } from "./worker/metering.js";

export function configFromEnv(env: Env, postgres: Config["postgres"] = null): Config {
  return {
    postgres,
    plan: env.NEON_EMULATOR_PLAN,
    domain: env.NEON_EMULATOR_DOMAIN,
    maxBodyBytes: env.NEON_EMULATOR_MAX_BODY_BYTES,
    operationMs: { ...DEFAULT_OPERATION_MS, ...env.NEON_EMULATOR_OPERATION_MS },
    checkIntervalSeconds: env.NEON_EMULATOR_CHECK_INTERVAL_SECONDS,
    operationRetentionDays: env.NEON_EMULATOR_OPERATION_RETENTION_DAYS,
    ...(Object.keys(env.NEON_EMULATOR_LIMITS).length ? { limits: env.NEON_EMULATOR_LIMITS } : {}),
    ...(env.NEON_EMULATOR_RATE_LIMIT === "neon" ? { rateLimits: NEON_RATE_LIMITS } : {}),
    ...(env.NEON_EMULATOR_API_KEY ? { startKeyHash: hashKey(env.NEON_EMULATOR_API_KEY) } : {}),
    projectRecoverySeconds: env.NEON_EMULATOR_PROJECT_RECOVERY_SECONDS,
  };
}

/** Where branch data lives: NEON_EMULATOR_DATA_DIR, or a folder beside the SQLite file named after it. */
export function dataDirOf(env: Env): string {
  if (env.NEON_EMULATOR_DATA_DIR) return path.resolve(env.NEON_EMULATOR_DATA_DIR);
  const db = path.resolve(env.NEON_EMULATOR_DB);
  return path.join(path.dirname(db), `${path.basename(db).replace(/\.[^.]*$/, "")}-data`);
}

/**
 * The manual clock resumes from its persisted times (the base, and each account's own), so it
 * never goes backwards across restarts.
 */
function makeClock(env: Env, storage: Storage): Clock {
  if (env.NEON_EMULATOR_CLOCK === "real") return new RealClock();
  const persisted = Number(readState(storage.db, MANUAL_CLOCK_KEY) ?? Number.NaN);
  const configured = env.NEON_EMULATOR_CLOCK_START ? Date.parse(env.NEON_EMULATOR_CLOCK_START) : undefined;
  const start = Number.isFinite(persisted)
    ? Math.max(persisted, configured ?? persisted)
    : (configured ?? wallNow());
  writeState(storage.db, MANUAL_CLOCK_KEY, String(start));
  return new ManualClock(start, readAccountClocks(storage.db));
}

/**
 * The JSON logger. Its `pid` and `hostname` are read here, at run time: pino reads them when it is
 * imported, which for `npm start` is when the start-up snapshot was built (see main.ts).
 */
export function createLogger(env: Env): Logger {
  return pino({ level: env.NEON_EMULATOR_LOG_LEVEL, base: { pid: process.pid, hostname: os.hostname() } });
}

export interface Runtime {
  ctx: Ctx;
  storage: Storage;
  driver: ComputeDriver;
  /** The Postgres driver when computes are real processes (the front door relays to its servers). */
  postgres: PostgresDriver | null;
  /** What the front door and SQL over HTTP ask of the rest (with real computes). */
  doorServices: DoorServices | null;
  /** Neon's SQL over HTTP on the HTTP port (with real computes). */
  sql: SqlOverHttp | null;
  /** Records the traffic and written data of the computes (with real computes). */
  metering: Metering | null;
  worker: Worker;
  app: ReturnType<typeof createApp>;
  logger: Logger;
  /** Keys this start generated (first key, or a seed's derived keys): print them once. */
  generatedKeys: GeneratedKey[];
}

/** Opens and migrates the database, makes sure the default account and keys exist, builds the app. */
export function buildRuntime(env: Env, logger: Logger = createLogger(env)): Runtime {
  // The binaries are looked for before the database is opened: a bad NEON_EMULATOR_PG_BIN stops here.
  let binaries: InstalledBinaries | null = null;
  if (env.NEON_EMULATOR_COMPUTE === "postgres") {
    try {
      binaries = new InstalledBinaries(findBinaries(env.NEON_EMULATOR_PG_BIN), env.NEON_EMULATOR_PG_BIN);
    } catch (err) {
      throw new EnvError((err as Error).message);
    }
  }
  const storage = openStorage(env.NEON_EMULATOR_DB);
  const ctx: Ctx = {
    db: storage.db,
    clock: makeClock(env, storage),
    ids: new IdGenerator(),
    config: configFromEnv(env, binaries),
  };
  const postgres = binaries ? new PostgresDriver(storage.db, dataDirOf(env), binaries, logger) : null;
  const driver: ComputeDriver = postgres ?? noneDriver;
  if (postgres) {
    ctx.branchData = postgres;
    ctx.pgSettingsProblem = (major, settings) => postgres.settingsCheck.problem(major, settings);
    postgres.historyWindow = (projectId) => historyKeptSince(ctx, projectId);
  }
  const worker = new Worker(ctx, { driver, logger });
  // Effects a previous process left half-done (it stopped mid-effect) are performed again.
  worker.releaseStaleClaims();
  const seedFile =
    env.NEON_EMULATOR_SEED === undefined
      ? demoSeedFile()
      : env.NEON_EMULATOR_SEED === "none"
        ? null
        : env.NEON_EMULATOR_SEED;
  const generatedKeys = (seedFile && applySeedFile(ctx, seedFile, logger)) || [];
  const account = ensureDefaultAccount(ctx);
  if (env.NEON_EMULATOR_API_KEY) {
    if (ensureApiKey(ctx, account.id, env.NEON_EMULATOR_API_KEY, "NEON_EMULATOR_API_KEY") === "revoked")
      throw new EnvError(
        "NEON_EMULATOR_API_KEY names a key that was revoked in this database; choose a new key",
      );
  } else if (countKeys(ctx) === 0) {
    generatedKeys.push({
      account: account.email,
      name: "first key",
      key: createApiKey(ctx, account.id, "first key").key,
    });
  }
  const services = postgres && doorServices(ctx, worker, postgres);
  const sql = services && new SqlOverHttp(services, logger);
  const metering =
    postgres && services && new Metering(ctx, services.egress, postgres, () => worker.notify(), logger);
  if (postgres && metering) postgres.walMeter = metering;
  if (postgres) {
    postgres.catalogSink = (branchId, server) => syncServerCatalog(ctx, branchId, server);
    postgres.dropsApplied = (branchId, drops) => dropsApplied(ctx, branchId, drops);
    postgres.keepAwake = (endpointId, delta) => recordClientConnection(ctx, endpointId, delta);
    postgres.notStarted = (endpointId) => {
      if (suspendUnstarted(ctx, endpointId).length > 0) worker.notify();
    };
    if (sql) postgres.idleSessionKeepers.push((endpointId, database) => sql.closeIdle(endpointId, database));
  }
  const app = createApp(ctx, {
    logger,
    worker,
    ...(sql
      ? {
          sql,
          alreadySent: (
            requireFromPackage()("@hono/node-server/utils/response") as { RESPONSE_ALREADY_SENT: Response }
          ).RESPONSE_ALREADY_SENT,
        }
      : {}),
    onEvents: (events) => {
      for (const event of events)
        driver
          .discard(event)
          .catch((err) => logger.error({ err, event: event.type }, "could not discard a compute"));
    },
  });
  return {
    ctx,
    storage,
    driver,
    postgres,
    doorServices: services,
    sql,
    metering,
    worker,
    app,
    logger,
    generatedKeys,
  };
}

/** How long the shutdown's end of the computes' client sessions may take on one server. */
const END_SESSIONS_MS = 2000;

/** Wakes one client waits through when suspends keep coming after the start (then it is refused). */
const WAKE_TRIES = 3;

/**
 * What the front door asks of the control plane, the worker and the driver: logins, wakes (one
 * shared wake per endpoint; the endpoint's operations performed at once, in either clock mode)
 * and client activity.
 */
function doorServices(ctx: Ctx, worker: Worker, postgres: PostgresDriver): DoorServices {
  const wakes = new Map<string, Promise<ComputeAddress>>();
  /** A client arrives: refused, let through to the running server, or (null) to wait for a wake. */
  const admit = (endpointId: string): ComputeAddress | null => {
    const { body, events } = wakeForConnection(ctx, endpointId);
    if (body.state === "gone") throw new DoorError({ code: "XX000", message: TEXTS.notFound });
    if (body.state === "disabled") throw new DoorError({ code: "XX000", message: TEXTS.disabled });
    if (body.state === "quota") throw new DoorError({ code: "XX000", message: TEXTS.unavailable });
    const address = postgres.addressOf(endpointId);
    if (body.state === "active" && address !== undefined) return address;
    if (events.length) worker.notify();
    return null;
  };
  /**
   * Neon's answer to a compute that could not start; with the reason when it is one the user fixes
   * on this machine (its Postgres major not installed), as the error's DETAIL.
   */
  const couldNotConnect = (endpointId: string) => {
    const major = postgres.missingMajor(endpointId);
    return new DoorError({
      code: "XX000",
      message: TEXTS.couldNotConnect,
      ...(major !== undefined
        ? {
            detail: `Postgres ${major} is not installed for the emulator; install it with: ${installCommand(major)}`,
          }
        : {}),
    });
  };
  const wake = async (endpointId: string): Promise<ComputeAddress> => {
    for (let tries = 1; ; tries++) {
      await worker.expedite(endpointId);
      const outcome = wakeOutcome(ctx, endpointId);
      if (outcome === "active") break;
      // Its start failed (the operation says why): no server is started behind the control plane's back.
      if (outcome === "failed" || tries === WAKE_TRIES) throw couldNotConnect(endpointId);
      // A suspend came after the start (or the endpoint changed): the client meets the endpoint
      // as it is now, woken again if it is idle, as Neon's proxy retries its wake.
      const address = admit(endpointId);
      if (address) return address;
    }
    // Active in the control plane with no server (it exited on its own): started again; or with
    // its start under way (the computes the emulator resumes as it starts): joined.
    if (postgres.addressOf(endpointId) === undefined)
      await postgres.perform({ kind: "start_compute", endpointId }).catch((err: unknown) => {
        throw postgres.missingMajor(endpointId) !== undefined ? couldNotConnect(endpointId) : err;
      });
    const address = postgres.addressOf(endpointId);
    if (address === undefined) throw new Error(`endpoint ${endpointId} has no running server`);
    return address;
  };
  return {
    domain: ctx.config.domain,
    login: (endpointId, role) => findLoginTarget(ctx, endpointId, role),
    serverRole: (endpointId, role) => postgres.serverRole(endpointId, role),
    ready(endpointId) {
      const shared = wakes.get(endpointId);
      if (shared) return shared;
      try {
        const address = admit(endpointId);
        if (address) return Promise.resolve(address);
      } catch (err) {
        return Promise.reject(err);
      }
      const started = wake(endpointId).finally(() => wakes.delete(endpointId));
      wakes.set(endpointId, started);
      return started;
    },
    connected: (endpointId, delta) => {
      recordClientConnection(ctx, endpointId, delta);
      // The session may have made, changed or dropped roles with SQL.
      if (delta < 0) postgres.catalogMayHaveChanged(endpointId);
    },
    statementsRan: (endpointId) => postgres.catalogMayHaveChanged(endpointId),
    serving: (endpointId) => postgres.serving(endpointId),
    endClientSessions: () => postgres.endClientSessions(END_SESSIONS_MS),
    egress: new EgressMeter(),
  };
}

/**
 * Opens the Postgres front door (NEON_EMULATOR_COMPUTE=postgres): its TLS identity kept in the
 * data folder (the CA also beside the database), its port recorded for the connection URIs.
 */
export async function openFrontDoor(runtime: Runtime, env: Env): Promise<FrontDoor | null> {
  const { postgres, ctx, logger } = runtime;
  if (!postgres) return null;
  resetClientConnections(ctx);
  const domain = ctx.config.domain;
  const hostNames = ["localhost", ...REGION_IDS.map((r) => `*.${proxyHost(r, domain)}`)];
  const db = path.resolve(env.NEON_EMULATOR_DB);
  const caCopy = path.join(path.dirname(db), `${path.basename(db).replace(/\.[^.]*$/, "")}-ca.pem`);
  const identity = await loadTlsIdentity(path.join(dataDirOf(env), "tls"), hostNames, caCopy);
  const host = env.HOST;
  const door = await FrontDoor.open({
    host,
    port: env.NEON_EMULATOR_PG_PORT ?? DEFAULT_PG_PORT,
    portIsDefault: env.NEON_EMULATOR_PG_PORT === undefined,
    services: runtime.doorServices ?? doorServices(ctx, runtime.worker, postgres),
    identity,
    handshakeTimeoutMs: env.NEON_EMULATOR_PG_AUTH_TIMEOUT * 1000,
    poolerMaxClients: env.NEON_EMULATOR_POOLER_MAX_CLIENTS,
    maxUnauthenticated: env.NEON_EMULATOR_MAX_CONNECTIONS,
    logger,
  });
  // Clients on this machine reach a wildcard address through the loopback one.
  const uriHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  ctx.config.frontDoor = { host: uriHost, port: door.port, caCert: identity.caCert };
  postgres.idleSessionKeepers.push((endpointId, database) => door.closeIdle(endpointId, database));
  postgres.roleSessionEnders.push((endpointId, roles) => door.endRoleClients(endpointId, roles));
  return door;
}

/** The front door's port unless NEON_EMULATOR_PG_PORT says otherwise (Postgres' own). */
export const DEFAULT_PG_PORT = 5432;
