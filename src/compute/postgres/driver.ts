import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Logger } from "pino";
import type { WalMeasure } from "../../control-plane/consumption/meter.js";
import { maxConnections } from "../../control-plane/endpoints/rules.js";
import type { ComputeEffect } from "../../control-plane/operations/rules.js";
import { DEFAULT_DATABASE_NAME, DEFAULT_ROLE_NAME } from "../../control-plane/projects/rules.js";
import { badRequest, notFound, unprocessable } from "../../errors.js";
import { wallNow, within } from "../../platform/clock.js";
import type { Db } from "../../platform/db.js";
import type { DomainEvent } from "../../platform/events.js";
import { type PgClient, pg } from "../../platform/pg.js";
import {
  type BranchReader,
  type ComputeDriver,
  EffectCutShort,
  type EffectResult,
  type HistoryRange,
} from "../driver.js";
import { ADMIN_USER, Administrator, TRANSACTION_TIMEOUT } from "./admin.js";
import { hasModule, type InstalledBinaries, installCommand, type PgBinaries, readdir } from "./binaries.js";
import { type CatalogSink, enabledSubscriptions, RoleReaders, takeCatalog } from "./catalog.js";
import { endRunning } from "./child-process.js";
import {
  controlInfo,
  copyData,
  copyStopped,
  copyWal,
  holdsLogicalSlot,
  linkTree,
  lsnText,
  makeCopiesFolder,
  markTops,
  maxLsn,
  minLsn,
  parseLsn,
  SEGMENT_BYTES,
  segmentName,
  shareUnchanged,
} from "./copy.js";
import { dropSubscriptions, keepSchemaOnly, type OnFolder } from "./copy-preparation.js";
import { neonEngine } from "./engine.js";
import {
  adoptBase,
  archivedIn,
  archivedSegments,
  chainOf,
  collectHistories,
  continuedFrom,
  copyBase,
  type HistoryLink,
  historiesDir,
  historyBytesByBranch,
  historyOf,
  historyStart,
  keptFrom,
  namedHistory,
  type Origin,
  projectBases,
  restoreCommand,
  rollTarget,
  segmentBytesBefore,
  stageWal,
  startHistory,
  tidyHistory,
  trimSegment,
} from "./history.js";
import { DataLayout } from "./layout.js";
import {
  closedFolderMessage,
  closedToServers,
  freePort,
  handOver,
  initdb,
  PgServer,
  serverIdentity,
  serverPids,
  stopAllNow,
} from "./process.js";
import {
  API_ROLE_ATTRIBUTES,
  type BranchSpec,
  databaseGrant,
  ensureMarks,
  grantInDatabases,
  holdsSpec,
  markDatabase,
  markRole,
  NEON_SUPERUSER,
  NEON_SUPERUSER_ATTRIBUTES,
  neonSuperuserGrants,
  reconcile,
  specFingerprint,
} from "./reconcile.js";
import { dumpSchema } from "./schema-dump/index.js";
import {
  ADMIN_SERVER_SETTINGS,
  archiving,
  BASE_SETTINGS,
  configText,
  endpointPgSettings,
  HOT_STANDBY_SETTINGS,
  hotStandbySettings,
  LOWER_THAN_PRIMARY,
  ownSettings,
  writeEndpointFile,
} from "./server-settings.js";
import { SettingsCheck } from "./settings-check.js";
import { endOrphan, endStrays } from "./strays.js";
import { ControlPlaneView } from "./view.js";
import { lastTransactionEnd, lastTransactionTime, recordAround } from "./wal-scan.js";

/** How to reach a running server: a Unix socket's path, or a loopback host and port. */
export type ComputeAddress = { path: string } | { host: string; port: number };

/** Where the driver reports measures of the branches' WAL (the metering job records them). */
export interface WalMeter {
  wal(branchId: string, measure: WalMeasure, lsn: string | null): void;
  /** The WAL a project's histories hold now, by branch (historyBytesByBranch). */
  history(projectId: string, bytes: ReadonlyMap<string, number>): void;
}

/** Folders of a branch's data at a point, read and removed (beside the branches' folders). */
const AT_POINT_PREFIX = ".at-";

/** The longest a replay of a branch's history may take (a long history is gigabytes of WAL). */
const RECOVERY_TIMEOUT_MS = 30 * 60_000;

/**
 * How often the histories of every project are pruned to its history_retention_seconds (a change
 * of it prunes that project's at once).
 */
const PRUNE_EVERY_MS = 10 * 60_000;
/** How often segments archived since are trimmed (trimAll). */
const TRIM_EVERY_MS = 15_000;

/** The longest the measure of a primary's WAL before it stops may hold up the stop. */
const STOP_MEASURE_TIMEOUT_MS = 1000;
/** How long after a client's session ends its server's roles are read (sessions ending meanwhile share the read). */
const ROLE_SYNC_MS = 1000;
/** How long reading the roles of a server a previous run left may take (its login, each query). */
const ORPHAN_READ_TIMEOUT_MS = 10_000;
/** How long a change that met a compute's connection ending waits to see the server exit. */
const STOP_WAIT_MS = 5000;
/** How long an apply_config's statement waits on a lock a client holds before the branch's other work may go first (applyConfig). */
const APPLY_LOCK_TIMEOUT_MS = 1000;
/** The pause before an apply_config a lock stopped is tried again. */
const APPLY_RETRY_MS = 100;
/** SQLSTATE of a statement that gave up waiting on a lock (lock_timeout). */
const LOCK_NOT_AVAILABLE = "55P03";
/** How long the read before a stop may take on its second try. */
const STOP_SYNC_TIMEOUT_MS = 15_000;

/** The longest a measure of a running primary's WAL may take (its login, its query). */
const WAL_POLL_TIMEOUT_MS = 5000;

/** How many computes recorded active a start of the emulator brings back at once. */
const RESUMED_AT_ONCE = 4;
/** How many times a minute a compute's server that exits unasked is started again. */
const RESTARTS_PER_MINUTE = 3;

interface Running {
  server: PgServer;
  projectId: string;
  branchId: string;
  /** A read replica's own folder, removed when it stops. */
  replicaDir?: string;
  /** A read replica's: the branch's data generation (dataGenerations) its copy was made at or after. */
  generation?: number;
  /** False while a starting primary's roles are not yet the control plane's (logins are checked against those meanwhile). */
  rolesReady: boolean;
  /**
   * A reconcile succeeded on it: until then (its start's was refused part way) what it holds is not
   * taken into the control plane, which would undo API changes it has not been given.
   */
  reconciled?: boolean;
  /** What the emulator set on its command line (its configuration file repeats them). */
  managed: Record<string, string>;
  /** It holds an enabled subscription, so keepAwake holds it awake until it stops. */
  subscribed?: boolean;
  /** Its stop was asked for: its exit is not a failure to recover from. */
  stopping?: boolean;
}

/**
 * NEON_EMULATOR_COMPUTE=postgres: every branch has a Postgres data folder under
 * `<data>/projects/<project>/branches/<branch>`, made from a template initialised once per major
 * (`<data>/templates/pg<major>`) or copied from its parent; every running compute endpoint is a
 * Postgres server on that folder. Operations' effects: create_timeline and create_branch make the
 * folder, start_compute and suspend_compute start and stop the server, apply_config brings the
 * running primary's roles and databases to the control plane's; a deleted project's servers stop
 * at once, and its delete_tenant (due when its recovery window closes) removes its folders.
 */
export class PostgresDriver implements ComputeDriver, BranchReader {
  readonly name = "postgres";
  readonly inline = false;
  private readonly view: ControlPlaneView;
  private readonly layout: DataLayout;
  private readonly admin: Administrator;
  /** An administrator's session per running server, kept while logins read roles through it. */
  private readonly roleReaders: RoleReaders;
  /** Why Postgres would refuse an endpoint's pg_settings, asked before the API takes them. */
  readonly settingsCheck: SettingsCheck;
  private readonly servers = new Map<string, Running>();
  private readonly templates = new Map<number, Promise<string>>();
  private readonly engines = new Map<number, { from: PgBinaries; engine: Promise<PgBinaries> }>();
  /**
   * Work on one branch's folder (making it, copying it, starting on it) runs one at a time; so
   * does reading a project's histories for a replay and moving one's base (withHistories).
   */
  private readonly branchLocks = new Map<string, Promise<unknown>>();
  /** The LSN each branch copy was taken at (reported as the branch's parent_lsn). */
  private readonly copiedAt = new Map<string, { lsn: string; committedAt?: number | undefined }>();
  /**
   * The wall time (ms) before which a project's history may go (its history_retention_seconds
   * back from now, on its clock); none kept when unset or undefined.
   */
  historyWindow: ((projectId: string) => number | undefined) | undefined;
  /** Copies at a point under way per project, until their history is written: no base moves meanwhile. */
  private readonly pointCopies = new Map<string, number>();
  /**
   * Each history's last roll that was not kept: its target, and the bytes its base would have
   * copied (a roll is kept only if it frees more): none is tried again until more could go.
   */
  private readonly rolledInVain = new Map<string, { target: bigint; copied: number }>();
  /** Prunings run one at a time, in order. */
  private pruning: Promise<void> = Promise.resolve();
  private pruneTimer: NodeJS.Timeout | undefined;
  private trimTimer: NodeJS.Timeout | undefined;
  /** Archived segments looked at by trimSegment (trimmed, or nothing to trim), as of the last round. */
  private trimmedSegments = new Set<string>();
  private trimRound: Promise<void> | undefined;
  private trimAgain = false;
  /**
   * Servers replaying a history: for an operation's copy at a point and for a pruning (both
   * stopped as shutdown begins: the next start takes them up again), and for a request's copy (a
   * snapshot, a schema at a point; stopped at close, once the requests had their grace).
   */
  private readonly replays = new Set<PgServer>();
  private readonly pruneReplays = new Set<PgServer>();
  private readonly requestReplays = new Set<PgServer>();
  private closed = false;

  constructor(
    db: Db,
    private readonly dataDir: string,
    private readonly binaries: InstalledBinaries,
    private readonly logger?: Logger,
  ) {
    this.view = new ControlPlaneView(db);
    this.layout = new DataLayout(dataDir);
    this.admin = new Administrator(this.layout);
    this.roleReaders = new RoleReaders(this.admin);
    this.settingsCheck = new SettingsCheck(binaries, this.layout, (major) => this.template(major), logger);
    const name = createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 12);
    this.socketDir =
      process.platform === "win32"
        ? undefined
        : path.join(os.tmpdir(), `neon-emulator-${process.getuid?.() ?? 0}-${name}`);
  }

  /**
   * Where the front door reaches an endpoint's running server: its Unix socket (Linux, macOS:
   * measured ~20 % more relayed queries per second than loopback TCP), else 127.0.0.1 and its port.
   * None while its start brings its roles and databases to the control plane's: a client let in
   * then would log in against roles about to change, and the start would undo what its SQL changed.
   */
  addressOf(endpointId: string): ComputeAddress | undefined {
    const port = this.servers.get(endpointId)?.rolesReady ? this.portOf(endpointId) : undefined;
    if (port === undefined) return undefined;
    return this.socketDir
      ? { path: path.join(this.socketDir, `.s.PGSQL.${port}`) }
      : { host: "127.0.0.1", port };
  }

  /**
   * Ends the client sessions of every running server, as their fast shutdown would (each client
   * hears FATAL 57P01 from its server, and what it held is released), leaving the servers and the
   * emulator's own sessions be: the emulator's shutdown does this before its front door lets go.
   */
  async endClientSessions(timeoutMs: number): Promise<void> {
    await Promise.all(
      [...this.servers.values()]
        .filter((running) => running.server.running)
        .map((running) =>
          this.admin
            .session(
              running.server.port,
              (client) =>
                client.query(
                  `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE backend_type = 'client backend' AND usename IS DISTINCT FROM current_user`,
                ),
              "postgres",
              timeoutMs,
            )
            .catch(() => undefined),
        ),
    );
  }

  /** Whether the endpoint's server runs and no stop of it has begun. */
  serving(endpointId: string): boolean {
    const running = this.servers.get(endpointId);
    return running?.server.running === true && !running.stopping;
  }

  /** The port of an endpoint's running server, if it runs. */
  portOf(endpointId: string): number | undefined {
    const running = this.servers.get(endpointId);
    return running?.server.running ? running.server.port : undefined;
  }

  /** Where measures of the branches' WAL go (the written-data meter); none when unset. */
  walMeter: WalMeter | undefined;

  /**
   * Where a branch's roles and databases as its running primary holds them go (the control plane's
   * copy, which returns what it took: roles to mark as the emulator's, databases to mark with their
   * origin id); none when unset. Read when a client's session ends (a second later, once for all that end
   * meanwhile), when a login reads a role, before an API change is applied, and before the primary stops.
   */
  catalogSink: CatalogSink | undefined;
  /**
   * Told when a running primary comes to hold an enabled logical replication subscription (+1)
   * and when it no longer does or stops (-1): its apply workers keep it from auto-suspending, as
   * Neon's compute counts them as activity. Read with its roles and databases, and at its start.
   */
  keepAwake: ((endpointId: string, delta: 1 | -1) => void) | undefined;
  /**
   * Told when the driver gives up starting a compute the control plane records as active (at
   * resume, or after its server kept exiting unasked): the control plane suspends it.
   */
  notStarted: ((endpointId: string) => void) | undefined;
  /** Where the drops a reconcile applied go (the control plane clears them); none when unset. */
  dropsApplied: ((branchId: string, drops: BranchSpec["drops"]) => void) | undefined;
  /**
   * Who keeps idle sessions on a primary's databases for clients (the pooler, SQL over HTTP):
   * asked to log out those on a database before it is renamed, which Postgres refuses while any
   * session is on it.
   */
  readonly idleSessionKeepers: ((endpointId: string, database: string) => void)[] = [];
  /**
   * Who keeps client connections logged in as a role apart from its server sessions (the pooler):
   * told before a primary ends the sessions of roles (a password reset, a drop), so those
   * clients end too, as Neon's reset_password says.
   */
  readonly roleSessionEnders: ((endpointId: string, roles: string[]) => void)[] = [];
  private readonly roleSyncs = new Map<string, NodeJS.Timeout>();

  /**
   * A role as the endpoint's running server holds it (its pg_authid password), null when it has no
   * role of that name that may log in now (or it is the emulator's own administrator); undefined
   * when it does not run, or its roles are not yet the control plane's (it is starting).
   */
  async serverRole(
    endpointId: string,
    role: string,
  ): Promise<{ verifier: string | null } | null | undefined> {
    const running = this.servers.get(endpointId);
    if (!running?.server.running || !running.rolesReady) return undefined;
    if (role === ADMIN_USER) return null;
    const { rows } = await this.roleReaders.session(endpointId, running.server.port, (client) =>
      client.query<{ rolpassword: string | null }>(
        `SELECT rolpassword FROM pg_authid
          WHERE rolname = $1 AND rolcanlogin AND (rolvaliduntil IS NULL OR rolvaliduntil > now())`,
        [role],
      ),
    );
    if (!running.replicaDir) this.catalogMayHaveChanged(endpointId);
    return rows[0] ? { verifier: rows[0].rolpassword } : null;
  }

  /** A client's session on the endpoint ended (or read a role): its primary's roles and databases are read a second later. */
  catalogMayHaveChanged(endpointId: string): void {
    if (!this.catalogSink || this.roleSyncs.has(endpointId)) return;
    const timer = setTimeout(() => {
      this.roleSyncs.delete(endpointId);
      const running = this.servers.get(endpointId);
      if (!running || running.replicaDir) return;
      void this.withBranch(running.branchId, () => this.syncCatalog(endpointId)).catch((err: unknown) => {
        // A read the compute's stop cut short is no loss: the stop reads them itself.
        if (this.serving(endpointId))
          this.logger?.warn(
            { err, endpoint: endpointId },
            "could not read the compute's roles and databases",
          );
      });
    }, ROLE_SYNC_MS);
    timer.unref();
    this.roleSyncs.set(endpointId, timer);
  }

  /**
   * Hands the roles and databases the endpoint's running primary holds to the control plane; the
   * roles and databases it took become the emulator's (an API delete drops them, a restore of the
   * branch replaces them).
   */
  private async syncCatalog(endpointId: string, session?: PgClient): Promise<void> {
    const running = this.servers.get(endpointId);
    if (!this.catalogSink || !running?.server.running || !running.reconciled || running.replicaDir) return;
    const take = async (client: PgClient) =>
      this.noteSubscriptions(
        endpointId,
        running,
        await takeCatalog(this.catalogSink, running.branchId, client),
      );
    await (session ? take(session) : this.roleReaders.session(endpointId, running.server.port, take));
  }

  /** Ends the endpoint's role reader and pending read (its server stops). */
  private dropRoleReader(endpointId: string): void {
    clearTimeout(this.roleSyncs.get(endpointId));
    this.roleSyncs.delete(endpointId);
    this.roleReaders.drop(endpointId);
  }

  /** Copies of a parent (by id) sharing one backup of it, while they may still join (copyBranch). */
  private readonly copyBatches = new Map<
    string,
    { dirs: string[]; made: Promise<Map<string, Promise<Copied>>> }
  >();
  /** Branches being copied online: their WAL moves for the copy, not for their clients. */
  private readonly walCopying = new Set<string>();

  /**
   * Measures where the WAL of each named endpoint's running primary ends now (`wrote`), right
   * after each answer and only while that server still runs and no online copy of its branch is
   * under way (a restore's new server, a copy's segment switches, are not its clients' writes).
   */
  async measureWal(endpointIds: Iterable<string>): Promise<void> {
    for (const endpointId of endpointIds) {
      const running = this.servers.get(endpointId);
      if (!running || running.replicaDir || !running.server.running) continue;
      const lsn = await this.admin
        .session(running.server.port, currentLsn, "postgres", WAL_POLL_TIMEOUT_MS)
        .catch(() => undefined);
      if (
        lsn &&
        this.servers.get(endpointId) === running &&
        running.server.running &&
        !this.walCopying.has(running.branchId)
      )
        this.walMeter?.wal(running.branchId, "wrote", lsn);
    }
  }

  async perform(effect: ComputeEffect): Promise<EffectResult | undefined> {
    await this.cleared;
    switch (effect.kind) {
      case "create_timeline":
      case "create_branch": {
        const restoreFrom = this.view.branch(effect.branchId)?.restoreSource;
        if (restoreFrom) {
          const restored = await this.restoreBranchData(effect.projectId, effect.branchId, restoreFrom);
          this.measureHistories(effect.projectId); // whose past each history is has changed
          const dir = this.layout.branch(effect.projectId, effect.branchId);
          return {
            branch: {
              id: effect.branchId,
              logicalSize: dataSize(dir),
              parentLsn: restored.lsn,
              ...(restored.committedAt !== undefined ? { parentCommitWallMs: restored.committedAt } : {}),
            },
          };
        }
        const dir = await this.ensureBranchData(effect.projectId, effect.branchId);
        const copiedAt = this.copiedAt.get(effect.branchId);
        this.copiedAt.delete(effect.branchId);
        // A root branch (a schema-only branch, a restored root's kept state) has no parent_lsn; a
        // restore's kept state keeps the restored branch's (its data is a copy of that branch's, not
        // of its parent's; a snapshot's, restored onto its parent, counts as the parent's).
        const made = this.view.branch(effect.branchId);
        const hasParent = Boolean(made?.parentId);
        const keptState = Boolean(made?.dataSource) && !made?.dataSource?.startsWith("snap-");
        const parentCopy = effect.kind === "create_branch" && hasParent && !keptState;
        // A new root's history is billed (a restore's kept state takes the restored branch's past);
        // a child's is not, and changes no root's.
        if (!hasParent) this.measureHistories(effect.projectId);
        return {
          branch: {
            id: effect.branchId,
            logicalSize: dataSize(dir),
            ...(parentCopy ? { parentLsn: copiedAt?.lsn ?? checkpointLsn(dir) } : {}),
            ...(parentCopy && copiedAt?.committedAt !== undefined
              ? { parentCommitWallMs: copiedAt.committedAt }
              : {}),
          },
        };
      }
      case "start_compute":
        await this.start(effect.endpointId);
        return undefined;
      case "suspend_compute": {
        // A start under way (a restore starting the branch's computes again) ends first: stopped
        // beside it, its server would run on while the endpoint is idle.
        await this.starting.get(effect.endpointId)?.catch(() => undefined);
        const running = this.servers.get(effect.endpointId);
        await this.stop(effect.endpointId);
        // A primary's data may have grown while it ran.
        if (!running || running.replicaDir) return undefined;
        const dir = this.layout.branch(running.projectId, running.branchId);
        return { branch: { id: running.branchId, logicalSize: dataSize(dir) } };
      }
      case "apply_config":
        // Settings first: a change taking back one that ends every login (a transaction_timeout
        // of 1ms) then lets the administrator in for the roles and databases.
        if (effect.endpointId) await this.applyEndpointSettings(effect.endpointId);
        if (effect.branchId) await this.applyConfig(effect.branchId);
        return undefined;
      case "delete_tenant":
        await this.deleteProject(effect.projectId);
        return undefined;
      case "apply_storage_config":
        await this.pruneHistories(effect.projectId);
        return undefined;
    }
  }

  /**
   * After a crash or restart: servers a previous run left behind (their folders' postmaster.pid
   * names a live postgres) are shut down, then the endpoints recorded active start again.
   */
  async resume(): Promise<void> {
    // Set before the first await: the worker, started just before, may already hand over effects.
    this.cleared = this.clearLeftovers().catch((err: unknown) =>
      this.logger?.error({ err }, "could not clear what a previous run left"),
    );
    await this.cleared;
    // A few at a time: each start waits on its server's disk and start-up as much as on the CPU
    // (six computes came back in 4.4 s one by one). Starts on one branch still take its lock in turn.
    const queue = this.view.activeEndpoints();
    const next = async (): Promise<void> => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        // Not one suspended (auto-suspend of a compute idle since before the restart) or deleted
        // while the computes before it started: its suspend found nothing to stop.
        if (!this.meantActive(id)) continue;
        await this.start(id).catch((err) => {
          this.logger?.error({ err, endpoint: id }, "could not resume a compute: suspended");
          this.giveUp(id);
        });
      }
    };
    await Promise.all(Array.from({ length: RESUMED_AT_ONCE }, next));
  }

  /**
   * What a previous run left is cleared at resume before any other work touches the folders:
   * effects and reads wait for it. (A restore the worker performs again after a crash made its
   * copy while the resume removed copies cut short, its own among them, and failed.)
   */
  private cleared: Promise<void> = Promise.resolve();

  private async clearLeftovers(): Promise<void> {
    const closed = closedToServers(this.dataDir);
    if (closed) this.logger?.error(closedFolderMessage(closed, this.dataDir));
    await Promise.all(
      this.layout
        .pidFiles()
        .map((file) =>
          endOrphan(file, this.logger, (port) => this.takeOrphanCatalog(path.dirname(file), port)),
        ),
    );
    await this.endStrays();
    // Copies a crash cut short (branch and snapshot folders being made, copies at a point, staged WAL).
    const projectsDir = this.layout.projects();
    for (const project of readdir(projectsDir)) {
      // What the control plane deleted while the folders' removal was still to come (it follows
      // the commit, and a crash or a kill in between left them for good).
      // A deleted project kept for recovery keeps its folders as they are.
      const rows = this.view.projectRows(project);
      if (rows === undefined) {
        fs.rmSync(path.join(projectsDir, project), { recursive: true, force: true });
        continue;
      }
      if (rows === "live") {
        for (const name of readdir(path.join(projectsDir, project, "branches")))
          if (/^br-[a-z0-9-]+$/.test(name) && !this.view.branch(name)) {
            fs.rmSync(this.layout.branch(project, name), { recursive: true, force: true });
            fs.rmSync(this.layout.replicas(project, name), { recursive: true, force: true });
          }
        for (const name of readdir(path.join(projectsDir, project, "snapshots")))
          if (/^snap-[a-z0-9-]+$/.test(name) && !this.view.snapshotExists(name))
            fs.rmSync(this.layout.snapshot(project, name), { recursive: true, force: true });
      }
      for (const folder of ["branches", "snapshots"]) {
        const dir = path.join(projectsDir, project, folder);
        for (const name of readdir(dir))
          if (name.startsWith(AT_POINT_PREFIX) || /\.tmp-\d+/.test(name) || name.endsWith(".stage"))
            fs.rmSync(path.join(dir, name), { recursive: true, force: true });
      }
      // The configuration files of the servers just ended (each start writes its own).
      fs.rmSync(path.join(projectsDir, project, "endpoints"), { recursive: true, force: true });
      // What a pruning cut short left: a base beside the one its history names, WAL before it.
      const histories = historiesDir(path.join(projectsDir, project));
      for (const id of readdir(histories)) tidyHistory(path.join(histories, id));
      if (rows === "live") this.collect(project); // the histories only removed branches reached
    }
    await markTops(this.layout.copiesFolders());
    this.pruneTimer ??= setInterval(() => this.pruneAll(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
    this.trimTimer ??= setInterval(() => this.trimAll(), TRIM_EVERY_MS);
    this.trimTimer.unref();
    this.trimAll();
  }

  /** Archived segments not looked at yet lose their zeroed tail (trimSegment), one at a time. */
  private async trimSegments(files: string[], seen?: Set<string>): Promise<void> {
    for (const file of files) {
      if (this.closed) return;
      seen?.add(file);
      if (this.trimmedSegments.has(file)) continue;
      await trimSegment(file).catch((err: unknown) => {
        // Gone meanwhile (a pruning, a deletion): nothing to say.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT")
          this.logger?.warn({ err, file }, "could not trim an archived WAL segment");
      });
      this.trimmedSegments.add(file);
    }
  }

  /**
   * Every archived segment not looked at yet loses its zeroed tail (trimSegment), one at a time in
   * the background: most are a segment switch's (each online copy, each stop), and a replay
   * unpacks every segment since its base. A round still under way is not doubled.
   */
  private trimAll(): void {
    if (this.closed) return;
    // Asked for during a round (a stop archived a segment since it listed them): once more after.
    if (this.trimRound) {
      this.trimAgain = true;
      return;
    }
    this.trimAgain = false;
    this.trimRound = (async () => {
      const seen = new Set<string>();
      for (const project of readdir(this.layout.projects()))
        await this.trimSegments(archivedSegments(this.layout.project(project)), seen);
      if (!this.closed) this.trimmedSegments = seen;
    })().finally(() => {
      this.trimRound = undefined;
      if (this.trimAgain) this.trimAll();
    });
  }

  /**
   * What SQL changed in the roles and databases of a branch's primary a previous run left running
   * (the emulator killed before it read them: a second after a client's session ends, or at a
   * stop), taken before that server is ended, so its next start does not undo it. Only from a
   * server whose reconcile had succeeded, of an endpoint recorded active, and no restore of the
   * branch under way: what it holds is then the control plane's, plus SQL's changes (an API
   * change still unfinished is the API's, as while it runs).
   */
  private async takeOrphanCatalog(dataDir: string, port: number): Promise<void> {
    if (!Number.isInteger(port) || path.basename(path.dirname(dataDir)) !== "branches") return;
    const branchId = path.basename(dataDir);
    const projectId = path.basename(path.dirname(path.dirname(dataDir)));
    const primary = this.view.primaryOf(branchId);
    if (!primary || this.view.endpoint(primary)?.currentState !== "active") return;
    if (!fs.existsSync(this.layout.reconciledMark(projectId, primary)) || this.view.restorePending(branchId))
      return;
    await this.withBranch(branchId, () =>
      this.admin.session(
        port,
        async (client) => {
          // Left by an earlier emulator, it may keep the marks in comments still: moved first.
          await ensureMarks(client);
          await takeCatalog(this.catalogSink, branchId, client);
        },
        "postgres",
        ORPHAN_READ_TIMEOUT_MS,
        // Not one of this process's servers: its major is its project's.
        this.view.pgVersion(projectId),
      ),
    ).catch((err: unknown) =>
      this.logger?.warn(
        { err, branch: branchId },
        "could not read the roles and databases of a server a previous run left",
      ),
    );
  }

  async discard(event: DomainEvent): Promise<void> {
    await this.cleared;
    if (event.type === "endpoint_deleted") {
      // A start under way (a resume, a wake) ends first: stopped beside it, its server would run on.
      await this.starting.get(event.endpointId)?.catch(() => undefined);
      await this.stop(event.endpointId);
    } else if (event.type === "project_deleted") await this.deleteProject(event.projectId);
    else if (event.type === "project_suspended") await this.stopProject(event.projectId);
    else if (event.type === "snapshot_deleted")
      fs.rmSync(this.layout.snapshot(event.projectId, event.snapshotId), { recursive: true, force: true });
    else if (event.type === "branch_deleted") {
      const { projectId, branchId } = event;
      await this.withBranch(branchId, async () => {
        await this.stopBranch(branchId);
        this.heldSpecs.delete(branchId);
        fs.rmSync(this.layout.branch(projectId, branchId), { recursive: true, force: true });
        fs.rmSync(this.layout.replicas(projectId, branchId), { recursive: true, force: true });
      });
      this.collect(projectId);
    }
  }

  /** Stray ends under way, one after another. */
  private strayEnds: Promise<void> = Promise.resolve();

  /** Ends what is left of servers that are gone (strays.ts) in the projects' folders. */
  private endStrays(): Promise<void> {
    const root = this.layout.projects();
    this.strayEnds = this.strayEnds
      .then(() => endStrays(root, serverPids(), this.logger))
      .catch((err: unknown) => this.logger?.warn({ err }, "could not end what a gone server left"));
    return this.strayEnds;
  }

  /** A server is about to start on `dir`: if the last one there did not stop cleanly (its postmaster.pid is left), what it left ends first. */
  private async beforeStartOn(dir: string): Promise<void> {
    if (fs.existsSync(path.join(dir, "postmaster.pid"))) await this.endStrays();
  }

  async close(): Promise<void> {
    this.stopping();
    await Promise.all([...this.requestReplays].map((server) => server.stop()));
    await this.pruning;
    // Starts under way (a compute started again after its server exited) end first, then stop.
    await Promise.all([...this.starting.values()].map((started) => started.catch(() => undefined)));
    await Promise.all([...this.servers.keys()].map((id) => this.stop(id)));
    await this.endStrays();
    await this.removeSocketDir();
  }

  /**
   * Every server (computes, copies, replays) ends at once, and every program the driver runs (a
   * copy's cp): what they were doing is cut short, and the next start takes it up again.
   */
  async closeNow(): Promise<void> {
    this.stopping();
    endRunning();
    await stopAllNow();
    await this.removeSocketDir();
  }

  /** The servers removed their sockets as they stopped; their folder goes too. */
  private async removeSocketDir(): Promise<void> {
    const socketDir = await this.socketDirReady?.catch(() => undefined);
    try {
      if (socketDir) fs.rmSync(socketDir, { recursive: true, force: true });
    } catch (err) {
      this.logger?.warn({ err }, "could not remove the servers' socket folder");
    }
  }

  /**
   * Writes the compute's configuration file: the data folder's own postgresql.conf, then `own`,
   * then what the command line sets (later lines win; the file agrees with the command line, so a
   * reload reports no setting of the emulator's as waiting for a restart). Out of the data folder,
   * so no branch copy or snapshot takes it along.
   */
  private async writeOwnSettings(
    projectId: string,
    endpointId: string,
    dataDir: string,
    own: Record<string, string>,
    managed: Record<string, string>,
  ): Promise<string> {
    const file = this.layout.ownSettings(projectId, endpointId);
    const lines = [`include ${configText(path.join(dataDir, "postgresql.conf"))}`];
    for (const [name, value] of Object.entries({ ...own, ...managed }))
      lines.push(`${name} = ${configText(value)}`);
    writeEndpointFile(file, `${lines.join("\n")}\n`);
    return file;
  }

  /**
   * An endpoint's settings changed (apply_config): a running compute's configuration file is
   * written again and its server reloads it, as Neon's compute applies a new spec. Settings
   * Postgres reads only at start (`pending_restart` in pg_settings) wait for the next start.
   */
  private async applyEndpointSettings(endpointId: string): Promise<void> {
    // A start under way may have read the settings before the change: it ends first.
    await this.starting.get(endpointId)?.catch(() => undefined);
    const running = this.servers.get(endpointId);
    const endpoint = this.view.endpoint(endpointId);
    if (!running?.server.running || !endpoint) return;
    const bin = await this.serverBinaries(this.view.pgVersion(running.projectId) ?? 0);
    const { preload } = this.view.projectServerSettings(running.projectId, (library) =>
      hasModule(bin, library),
    );
    const dataDir = running.replicaDir ?? this.layout.branch(running.projectId, running.branchId);
    const own = ownSettings(preload, endpointPgSettings(endpoint.settings));
    await this.writeOwnSettings(running.projectId, endpointId, dataDir, own, running.managed);
    // Reloaded without a session first: a change taking back a transaction_timeout too short for
    // any login applies. The session reloads too, so that what it reads is the reloaded state.
    const reload = running.server.reload().then(() =>
      this.admin.session(running.server.port, async (client) => {
        await client.query("SELECT pg_reload_conf()");
        // What the reload could not apply, other than what waits for a restart: an unknown
        // setting, a value Postgres does not take (the operation fails naming them). A row naming no
        // setting ("setting could not be applied") is Postgres' summary of those, or of a setting
        // read only at start that the change removed, which waits for a restart too.
        const { rows } = await client.query<{ name: string; setting: string }>(
          `SELECT f.name, f.setting FROM pg_catalog.pg_file_settings f
           LEFT JOIN pg_catalog.pg_settings s ON s.name = f.name
          WHERE f.error IS NOT NULL AND f.name IS NOT NULL AND NOT coalesce(s.pending_restart, false)`,
        );
        return rows;
      }),
    );
    // A compute stopping meanwhile (a suspend, a restart) reads the settings at its next start.
    const refused = await reload.catch(async (err: unknown) => {
      if (await stoppedUnder(err, running.server)) return [];
      if ((err as { code?: string }).code === TRANSACTION_TIMEOUT)
        throw new Error(
          `the compute's transaction_timeout ends every login, the administrator's included (${(err as Error).message}): the settings are applied, but which ones the server refused could not be read; a change of pg_settings taking it back applies`,
        );
      throw err;
    });
    if (refused.length)
      throw new Error(
        `the compute refused pg_settings ${refused
          .map((row) => `${row.name} = '${row.setting}'`)
          .join(
            ", ",
          )} (a value the running server does not take; a loaded module's settings are known to it alone): it keeps its previous value`,
      );
  }

  /**
   * Removes the project's histories no branch folder reaches any more (a deleted branch's, a
   * restored branch's previous one that no branch continues); folders being made count.
   */
  private collect(projectId: string): void {
    const branchesDir = path.join(this.layout.project(projectId), "branches");
    // Named by a folder, whole or still being made.
    const live = readdir(branchesDir)
      .map((name) => namedHistory(path.join(branchesDir, name)))
      .filter((id): id is string => id !== undefined);
    collectHistories(this.layout.project(projectId), live);
  }

  /** The endpoint's Postgres major when its binaries are not installed (why its start fails), else undefined. */
  missingMajor(endpointId: string): number | undefined {
    const endpoint = this.view.endpoint(endpointId);
    const major = endpoint && this.view.pgVersion(endpoint.projectId);
    return major !== undefined && !this.binaries.has(major) ? major : undefined;
  }

  private binariesFor(major: number): PgBinaries {
    const bin = this.binaries.get(major);
    if (!bin)
      throw new Error(
        `Postgres ${major} binaries are not installed; install them with: ${installCommand(major)}`,
      );
    return bin;
  }

  /**
   * The installation a major's servers run from: Neon's trusted contrib extensions (engine.ts), made
   * once per process; the package's own when it cannot be made (the servers then keep stock
   * Postgres' rules for those extensions, and the reason is logged).
   */
  private serverBinaries(major: number): Promise<PgBinaries> {
    const bin = this.binariesFor(major);
    const made = this.engines.get(major);
    // Made again from binaries installed again (a package npm removed and put back, or another build).
    let engine = made?.from === bin ? made.engine : undefined;
    if (!engine) {
      engine = neonEngine(bin, this.layout.engines()).then(
        (made) => made ?? bin,
        (err: Error) => {
          this.logger?.warn(
            { major, error: err.message },
            "servers run from the Postgres package as it is: Neon's trusted extensions are not available",
          );
          return bin;
        },
      );
      this.engines.set(major, { from: bin, engine });
    }
    return engine;
  }

  /** Runs `work` after every earlier piece of work on the branch's folder. */
  private withBranch<T>(branchId: string, work: () => Promise<T>): Promise<T> {
    const before = this.branchLocks.get(branchId) ?? Promise.resolve();
    const next = before.catch(() => {}).then(work);
    this.branchLocks.set(branchId, next);
    const release = () => {
      if (this.branchLocks.get(branchId) === next) this.branchLocks.delete(branchId);
    };
    // The caller handles a failure; the lock only needs to be released either way.
    next.then(release, release);
    return next;
  }

  /**
   * The servers' Unix sockets live in one private folder (0700, the servers' user) under the
   * system's temporary folder: a socket path must stay short (about 100 bytes), which a data
   * folder's path may not. Named after the user and the data folder, so two emulators never share
   * one (see makeSocketDir for one another user made by that name).
   */
  private socketDir: string | undefined;

  private socketDirReady: Promise<string> | undefined;

  /** Made (or taken over from an earlier run) once per process; a failure is tried again at the next start. */
  private ensureSocketDir(): Promise<string> {
    this.socketDirReady ??= this.makeSocketDir().catch((err: unknown) => {
      this.socketDirReady = undefined;
      throw err;
    });
    return this.socketDirReady;
  }

  private async makeSocketDir(): Promise<string> {
    let dir = this.socketDir as string;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const found = fs.lstatSync(dir);
    const mine = [process.getuid?.(), serverIdentity().uid].filter((uid) => uid !== undefined);
    if (!found.isDirectory() || !mine.includes(found.uid)) {
      // Made by another user (its name is predictable) or not a folder: one of this run's own.
      this.logger?.warn(
        { folder: dir },
        "the servers' socket folder belongs to another user; using a new one",
      );
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "neon-emulator-"));
      this.socketDir = dir;
    }
    fs.chmodSync(dir, 0o700);
    await handOver(dir);
    return dir;
  }

  /** The template cluster of a major, initialised once (with the neon_superuser role every API role joins). */
  private template(major: number): Promise<string> {
    let made = this.templates.get(major);
    if (!made) {
      made = this.makeTemplate(major);
      this.templates.set(major, made);
      made.catch(() => this.templates.delete(major));
    }
    return made;
  }

  private async makeTemplate(major: number): Promise<string> {
    const bin = this.binariesFor(major);
    const dir = this.layout.template(major);
    if (fs.existsSync(path.join(dir, "PG_VERSION"))) return dir;
    const closed = closedToServers(this.dataDir);
    if (closed) throw new Error(closedFolderMessage(closed, this.dataDir));
    const work = `${dir}.tmp-${process.pid}`;
    fs.rmSync(work, { recursive: true, force: true });
    // Folders above a data folder must let the server's user through (0711: through, not list).
    fs.mkdirSync(path.dirname(work), { recursive: true, mode: 0o711 });
    fs.mkdirSync(work, { mode: 0o700 });
    const pwfile = path.join(path.dirname(work), `.pw-${process.pid}`);
    fs.writeFileSync(pwfile, this.admin.password(), { mode: 0o600 });
    try {
      await handOver(work);
      await handOver(pwfile);
      await initdb(bin, work, ADMIN_USER, pwfile);
    } finally {
      fs.rmSync(pwfile, { force: true });
    }
    const server = await PgServer.start(bin, work, await freePort(), BASE_SETTINGS);
    try {
      await this.admin.session(server.port, async (client) => {
        await client.query(`CREATE ROLE ${NEON_SUPERUSER} ${NEON_SUPERUSER_ATTRIBUTES}`);
        for (const grant of neonSuperuserGrants(major * 10000)) await client.query(grant);
        // A new project's default role and database are in the template already (reconcile gives
        // the role its password and the database its id; a project with other names has both
        // among its drops, for its first reconcile): no CREATE DATABASE at a project's first start.
        await client.query(
          `CREATE ROLE ${DEFAULT_ROLE_NAME} NOLOGIN ${API_ROLE_ATTRIBUTES} IN ROLE ${NEON_SUPERUSER}`,
        );
        await client.query(`CREATE DATABASE ${DEFAULT_DATABASE_NAME} OWNER ${DEFAULT_ROLE_NAME}`);
        await client.query(databaseGrant(DEFAULT_DATABASE_NAME));
        await ensureMarks(client);
        await client.query(markRole(DEFAULT_ROLE_NAME, false));
        await client.query(markDatabase(DEFAULT_DATABASE_NAME, 0));
        await grantInDatabases(client, [DEFAULT_DATABASE_NAME], (db, work) =>
          this.admin.session(server.port, work, db),
        );
      });
    } finally {
      await server.stop();
    }
    fs.renameSync(work, dir);
    return dir;
  }

  /**
   * The branch's folder, made first if it is not there: a copy of its parent's (or of what its
   * data_source names), or of the template. With `sourceStopped`, the folder it is made
   * from is stopped and its lock held by the caller (a restore's swap, making the branch that keeps
   * the restored branch's last state): copied as it is.
   */
  private async ensureBranchData(
    projectId: string,
    branchId: string,
    sourceStopped = false,
  ): Promise<string> {
    if (!sourceStopped) await this.untilKeptByRestore(projectId, branchId);
    return this.withBranch(branchId, async () => {
      const dir = this.layout.branch(projectId, branchId);
      if (fs.existsSync(path.join(dir, "PG_VERSION"))) return dir;
      const branch = this.view.branch(branchId);
      const major = this.view.pgVersion(projectId);
      if (!branch || major === undefined) throw new Error(`branch ${branchId} no longer exists`);
      await makeCopiesFolder(path.dirname(dir));
      // Made under another name and renamed once whole: a copy cut short (a failure, a crash)
      // never looks like a branch's folder.
      const work = `${dir}.tmp-${process.pid}`;
      fs.rmSync(work, { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
      // Until the history continuing its source's is written, no base moves past the copy.
      const release = this.holdHistories(projectId);
      try {
        // A restore's preserved state is made from the restored branch's data, any other branch from its parent's.
        const from = branch.dataSource ?? branch.parentId;
        const projectDir = this.layout.project(projectId);
        let continues: Origin | undefined;
        if (from?.startsWith("snap-")) {
          // A snapshot holds only the WAL it needs (an online copy's, from its backup's start): all of it.
          const snapshotDir = this.layout.snapshot(projectId, from);
          await copyData(snapshotDir, work);
          await copyWal(snapshotDir, work, segmentName(controlInfo(snapshotDir).tli, 0n));
          this.copiedAt.set(branchId, { lsn: this.view.snapshotLsn(from) ?? checkpointLsn(work) });
        } else if (from) {
          const point = parsePoint(branch.historyPoint);
          const copied =
            sourceStopped && !point
              ? await copyStoppedBranch(this.layout.branch(projectId, from), work)
              : await this.copyFrom(
                  projectId,
                  from,
                  await this.ensureBranchData(projectId, from),
                  work,
                  point,
                );
          this.copiedAt.set(branchId, { lsn: copied.lsn, committedAt: copied.committedAt });
          // A restore's kept state: the restored branch's past is its own.
          if (branch.initSource !== "schema-only")
            continues = continuing(copied, branchId, Boolean(branch.dataSource));
        } else {
          await copyStopped(await this.template(major), work);
        }
        if (continues) await startHistory(projectDir, work, continues);
        if (from) await dropSubscriptions(this.folderWork(major), this.admin, work, projectDir);
        if (branch.initSource === "schema-only")
          await keepSchemaOnly(this.folderWork(major), this.admin, work);
        if (!continues) {
          // A root: its history starts from a base copy of its own (the template's files, linked).
          await this.startRootHistory(
            major,
            projectDir,
            work,
            branchId,
            from ? undefined : await this.template(major),
          );
        }
        fs.renameSync(work, dir);
        this.walMeter?.wal(branchId, "reset", null);
        this.heldSpecs.delete(branchId);
      } catch (err) {
        fs.rmSync(work, { recursive: true, force: true });
        this.collect(projectId); // a history started for it
        throw err;
      } finally {
        release();
      }
      return dir;
    });
  }

  /**
   * A restore (POST …/branches/{b}/restore): the branch's folder is replaced by a consistent copy
   * of the source branch's, at its head or at the point the restore names (from its history; the
   * source may be the branch itself). The copy is made beside the folder; the branch's servers
   * then stop for the swap (clients see 57P01, as for a restart), any branch made to keep the
   * previous state gets its copy of the stopped folder (every write clients made before the stop
   * is in it), and the servers start again on the new data. Returns the LSN the copy was taken at
   * (and, at an LSN, when its last transaction committed).
   */
  private async restoreBranchData(projectId: string, branchId: string, sourceId: string): Promise<Copied> {
    // Until the history continuing the source's is written, no base moves past the copy.
    const release = this.holdHistories(projectId);
    try {
      return await this.restoreBranchDataHeld(projectId, branchId, sourceId);
    } finally {
      release();
    }
  }

  /**
   * A branch keeping the previous state of a branch under restore (preserve_under_name) is made
   * by that restore, from the stopped folder at its swap (every write made before it is kept): its
   * own create_branch, or a start on it, waits for that, outside any lock (the swap takes the
   * restored branch's lock, then this one's). A restore that ended without making it (it failed)
   * leaves it to be made as any branch is.
   */
  private async untilKeptByRestore(projectId: string, branchId: string): Promise<void> {
    const made = () => fs.existsSync(path.join(this.layout.branch(projectId, branchId), "PG_VERSION"));
    // A branch whose folder is there (every start but a new branch's first) reads nothing more.
    if (made()) return;
    const from = this.view.branch(branchId)?.dataSource;
    if (!from || from.startsWith("snap-")) return;
    while (!made() && this.view.restorePending(from)) await new Promise((r) => setTimeout(r, 50));
  }

  private async restoreBranchDataHeld(
    projectId: string,
    branchId: string,
    sourceId: string,
  ): Promise<Copied> {
    const sourceDir = await this.ensureBranchData(projectId, sourceId);
    const major = this.view.pgVersion(projectId);
    if (major === undefined) throw new Error(`project ${projectId} no longer exists`);
    const projectDir = this.layout.project(projectId);
    const dir = this.layout.branch(projectId, branchId);
    const work = `${dir}.tmp-${process.pid}`;
    fs.rmSync(work, { recursive: true, force: true });
    await makeCopiesFolder(path.dirname(dir));
    let wereRunning: string[] = [];
    try {
      const copied = await this.copyFrom(
        projectId,
        sourceId,
        sourceDir,
        work,
        parsePoint(this.view.branch(branchId)?.historyPoint ?? null),
      );
      const continues = continuing(copied, branchId, false);
      if (continues) await startHistory(projectDir, work, continues);
      await dropSubscriptions(this.folderWork(major), this.admin, work, projectDir);
      if (!continues) await this.startRootHistory(major, projectDir, work, branchId);
      await this.withBranch(branchId, async () => {
        wereRunning = await this.stopBranch(branchId);
        for (const keeper of this.view.keepersOf(branchId))
          await this.ensureBranchData(projectId, keeper, true);
        fs.rmSync(dir, { recursive: true, force: true });
        fs.renameSync(work, dir);
        this.dataGenerations.set(branchId, (this.dataGenerations.get(branchId) ?? 0) + 1);
        this.walMeter?.wal(branchId, "reset", null);
        this.heldSpecs.delete(branchId);
      });
      this.collect(projectId);
      for (const id of wereRunning) {
        // One suspended meanwhile (its suspend_compute under way or done) stays stopped.
        const endpoint = this.view.endpoint(id);
        if (!endpoint || (endpoint.pendingState ?? endpoint.currentState) === "idle") continue;
        await this.start(id).catch((err) =>
          this.logger?.error(
            { err, endpoint: id },
            "could not start a compute again after its branch's restore",
          ),
        );
      }
      await this.refreshStaleReplicas(branchId);
      return copied;
    } catch (err) {
      fs.rmSync(work, { recursive: true, force: true });
      this.collect(projectId); // a history started for it
      throw err;
    }
  }

  /**
   * Starts a root history for a folder no server runs on, from a copy of it (or, for a copy of the
   * template, from the template's files, linked: nothing writes to them). A folder that did not
   * stop cleanly (an online copy's, a crash's) is first brought to a clean stop, so the history
   * begins at a consistent point: its checkpoint.
   */
  private async startRootHistory(
    major: number,
    projectDir: string,
    dir: string,
    branchId: string,
    template?: string,
  ): Promise<void> {
    if (!controlInfo(dir).clean || fs.existsSync(path.join(dir, "backup_label")))
      await this.onFolder(major, dir, {}, async () => {});
    const control = controlInfo(dir);
    await startHistory(
      projectDir,
      dir,
      { lsn: lsnText(control.checkpoint), tli: control.tli, branchId },
      (base) => (template ? linkTree(template, base) : copyWhole(dir, base)),
    );
  }

  /**
   * A copy of `sourceId`'s data into `dir`: of its head, or of the point its history is replayed
   * to (the replay kept in `replays` while it runs).
   */
  private async copyFrom(
    projectId: string,
    sourceId: string,
    sourceDir: string,
    dir: string,
    point: HistoryPoint | undefined,
    replays = this.replays,
  ): Promise<Copied> {
    if (point) return this.copyAt(projectId, sourceId, sourceDir, dir, point, replays);
    return this.copyBranch(sourceId, sourceDir, dir);
  }

  /**
   * The branch's data as it was at `point`, made in `dir` by replaying its history: the chain's base
   * copied, the chain's WAL staged, and Postgres' archive recovery run to the point and promoted (a
   * new timeline, as on any point-in-time recovery). A time after the branch's last commit is its
   * head: the recovery then runs to where its WAL ends. The source's lock is held while the base is
   * copied and its WAL (live files included) laid out, not through the replay. An operation's replay
   * (kept in `this.replays`) stopped by the shutdown ends the copy with EffectCutShort.
   */
  private async copyAt(
    projectId: string,
    sourceId: string,
    sourceDir: string,
    dir: string,
    point: HistoryPoint,
    replays: Set<PgServer>,
  ): Promise<Copied> {
    // An operation's replay, once the shutdown began (stopped, or come to its copy after a wait on a lock).
    const cutShort = () =>
      this.closed && replays === this.replays
        ? new EffectCutShort(`the shutdown stopped the replay of branch ${sourceId}'s history`)
        : undefined;
    const cut = cutShort();
    if (cut) throw cut;
    const projectDir = this.layout.project(projectId);
    const major = this.view.pgVersion(projectId);
    if (major === undefined) throw new Error(`project ${projectId} no longer exists`);
    const stage = `${dir}.stage`;
    fs.rmSync(stage, { recursive: true, force: true });
    try {
      // Under the source's lock: what the replay reads is laid out (the base copied, the WAL
      // staged as links and copies), so the source's folder and history may move on after.
      const { history, end, root, ranges } = await this.withBranch(sourceId, () =>
        this.withHistories(projectId, async () => {
          const history = historyOf(sourceDir);
          if (!history) throw noHistory(sourceId);
          const chain = chainOf(projectDir, history);
          // Where its WAL ends: written out (to the files staged from its live pg_wal), or its shutdown checkpoint.
          const live = await this.onRunningPrimary(sourceId, (port) => this.admin.session(port, currentLsn));
          // A stopped folder a crash left is brought to a clean stop: its WAL then ends at its checkpoint.
          if (!live && !controlInfo(sourceDir).clean)
            await this.onFolder(major, sourceDir, archiving(projectDir, sourceDir), async () => {});
          const end = parseLsn(live ? live.value : checkpointLsn(sourceDir));
          const begins = historyStart(chain);
          const start = parseLsn(begins.lsn);
          // Checked again here: a pruning may have moved the history's start since the request.
          if ("lsn" in point) {
            const lsn = parseLsn(point.lsn);
            if (lsn < start || lsn > end) throw outsideHistory(`LSN ${point.lsn}`, sourceId, start, end);
          } else if (begins.since !== undefined && point.wallMs < begins.since)
            throw badRequest(
              `the time asked is before branch ${sourceId}'s history begins (the emulator keeps it from when the branch's current data was made, within the project's history_retention_seconds)`,
            );
          const ranges = await stageWal(chain, end, (link) => this.liveFolder(projectId, link), stage);
          fs.rmSync(dir, { recursive: true, force: true });
          const root = chain[chain.length - 1] as HistoryLink;
          await copyBase(root, dir);
          return { history, end, root, ranges };
        }),
      );
      let committedAt: number | undefined;
      const recover = async (target: Record<string, string>, fresh: boolean): Promise<string> => {
        if (fresh) {
          fs.rmSync(dir, { recursive: true, force: true });
          // The chain's base now (pruning may have moved it since: the staged WAL reaches back further).
          await this.withHistories(projectId, () =>
            copyBase(chainOf(projectDir, history).at(-1) ?? root, dir),
          );
        }
        fs.writeFileSync(path.join(dir, "recovery.signal"), "");
        await handOver(dir);
        const bin = await this.serverBinaries(major);
        const server = await PgServer.start(
          bin,
          dir,
          await freePort(),
          {
            ...ADMIN_SERVER_SETTINGS,
            ...target,
            restore_command: restoreCommand(stage),
            recovery_target_action: "promote",
            recovery_target_timeline: "latest",
            // No client reads it while it recovers: no checks of the settings a hot standby needs.
            hot_standby: "off",
            archive_mode: "off",
          },
          RECOVERY_TIMEOUT_MS,
          (spawned) => this.replaying(spawned, replays),
        ).catch((err: unknown) => {
          throw cutShort() ?? err;
        });
        const redone = /redo done at ([0-9A-F]+\/[0-9A-F]+)/.exec(server.log())?.[1];
        committedAt = lastCommitTime(server.log());
        await server.stop();
        return redone ?? lsnText(end);
      };
      // The state at an LSN holds the records that end by it (as Neon's at an LSN); the state at a
      // time, the records up to the end of the last transaction by then (wal-scan.ts): what came
      // after it, a DROP DATABASE under way included, is not replayed.
      const byLsn = (at: string) => ({ recovery_target_lsn: at, recovery_target_inclusive: "off" });
      let lsn: string;
      try {
        if ("lsn" in point) {
          // A record that begins before the point and ends after it is not replayed (unless it
          // begins before the copy the replay starts from is consistent: then the point as asked).
          const straddling = await recordAround(stage, ranges, parseLsn(point.lsn));
          if (straddling === undefined) await recover(byLsn(point.lsn), false);
          else
            await recover(byLsn(lsnText(straddling)), false).catch((err: Error) => {
              if (!/before consistent recovery point/.test(err.message)) throw err;
              return recover(byLsn(point.lsn), true);
            });
          lsn = point.lsn;
        } else {
          const byTime = { recovery_target_time: timestampText(point.wallMs) };
          const endedBy = await lastTransactionEnd(stage, ranges, end, point.wallMs);
          lsn =
            endedBy === undefined
              ? await recover(byTime, false)
              : await recover(byLsn(lsnText(endedBy)), false).then(
                  () => lsnText(endedBy),
                  (err: Error) => {
                    // That end comes before the copy the replay starts from is consistent: the
                    // replay stops at the first transaction's end after the time instead.
                    if (!/before consistent recovery point/.test(err.message)) throw err;
                    return recover(byTime, true);
                  },
                );
        }
      } catch (err) {
        // No record begins at or after the point (a time after the last commit, an LSN inside
        // the last record): the state there is the state where the WAL ends, all of it replayed
        // (stageWal made sure none of it is missing).
        if (!/recovery ended before configured recovery target was reached/.test((err as Error).message))
          throw err;
        await recover({}, true);
        lsn = lsnText(end);
      }
      const tli = controlInfo(dir).tli;
      return {
        lsn,
        tli,
        history,
        startsAt: switchPoint(dir, tli),
        // What a branch at an LSN shows as its parent_timestamp (one at a time shows that time).
        committedAt: "lsn" in point ? committedAt : undefined,
      };
    } finally {
      fs.rmSync(stage, { recursive: true, force: true });
    }
  }

  /** The folder of the branch still writing to a history (its live pg_wal holds what is not archived yet), if any. */
  private liveFolder(projectId: string, link: HistoryLink): string | undefined {
    const live = this.layout.branch(projectId, link.origin.branchId);
    return historyOf(live) === link.id ? live : undefined;
  }

  /** Runs `work` after every earlier read of the project's histories for a replay, and every move of a base. */
  private withHistories<T>(projectId: string, work: () => Promise<T>): Promise<T> {
    return this.withBranch(`${projectId}/histories`, work);
  }

  /**
   * A copy at a point of the project's histories is under way until the returned function is
   * called (once the history continuing it is written): no base moves meanwhile, past the point.
   */
  private holdHistories(projectId: string): () => void {
    this.pointCopies.set(projectId, (this.pointCopies.get(projectId) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (this.pointCopies.get(projectId) ?? 1) - 1;
      if (left > 0) this.pointCopies.set(projectId, left);
      else this.pointCopies.delete(projectId);
    };
  }

  /** A server replaying a history, kept in `set` while it runs (to be stopped at shutdown). */
  private replaying(server: PgServer, set: Set<PgServer>): void {
    set.add(server);
    void server.exited.then(() => set.delete(server));
    if (this.closed && set !== this.requestReplays) void server.stop();
  }

  /**
   * Shutdown begins: pruning stops (between histories, and any replay of one under way), and so
   * do operations' replays (a branch or a restore at a point of a long history takes minutes), so
   * the effects the worker drains end soon; what they had not done, the next start does (the
   * operations stay claimed, as a crash leaves them, and run again).
   */
  stopping(): void {
    this.closed = true;
    clearInterval(this.pruneTimer);
    clearInterval(this.trimTimer);
    for (const server of [...this.pruneReplays, ...this.replays]) void server.stop();
  }

  /** Every project's histories pruned, one after another; a round still under way is not doubled. */
  private pruneAll(): void {
    if (this.pruneRound) return;
    const projects = readdir(this.layout.projects());
    this.pruneRound = (async () => {
      for (const projectId of projects) {
        if (this.closed) return;
        await this.pruneHistories(projectId).catch((err) =>
          this.logger?.warn({ err, project: projectId }, "could not prune a project's branch history"),
        );
      }
    })().finally(() => {
      this.pruneRound = undefined;
    });
  }

  private pruneRound: Promise<void> | undefined;

  /**
   * Prunes a project's histories to its retention window (historyWindow), after any pruning under
   * way. A history whose own WAL was archived before the window began has its base rolled forward
   * past that WAL (a replay stopped there, kept at its restartpoint, becomes the base of a root),
   * and the WAL goes: no point before the window can be asked for (the API refuses it), and every
   * point after replays from the new base. The deepest histories go first, so one continuing
   * another becomes a root of its own rather than holding the other's base back; a base never
   * moves past where a history still continuing it begins.
   */
  pruneHistories(projectId: string): Promise<void> {
    const run = this.pruning.then(async () => {
      const before = this.historyWindow?.(projectId);
      // A create or restore at a point, accepted and not yet made, may need what would go.
      if (before === undefined || this.closed || this.view.pointsPending(projectId)) return;
      const projectDir = this.layout.project(projectId);
      this.collect(projectId); // none reached by no branch is rolled
      const depths: [string, number][] = [];
      for (const id of readdir(historiesDir(projectDir)))
        try {
          depths.push([id, chainOf(projectDir, id).length]);
        } catch {
          // Still being made (no origin yet), or a chain a replay could not use: left as it is.
        }
      depths.sort((a, b) => b[1] - a[1]);
      for (const [id] of depths) {
        if (this.closed) return;
        await this.rollForward(projectId, id, before).catch((err) =>
          this.logger?.warn({ err, project: projectId, history: id }, "could not prune a branch's history"),
        );
      }
      // Those a rolled history no longer continues, unless a branch still reaches them.
      this.collect(projectId);
    });
    void run.finally(() => this.measureHistories(projectId)).catch(() => {});
    this.pruning = run.catch(() => {});
    return run;
  }

  /** Rolls one history's base forward past its WAL archived before `before` (wall ms), if any. */
  private async rollForward(projectId: string, id: string, before: number): Promise<void> {
    const projectDir = this.layout.project(projectId);
    const major = this.view.pgVersion(projectId);
    if (major === undefined || !fs.existsSync(path.join(historiesDir(projectDir), id))) return;
    const chain = chainOf(projectDir, id);
    const link = chain[0] as HistoryLink;
    const roll = rollTarget(link, before, continuedFrom(projectDir, id), this.liveFolder(projectId, link));
    const vain = this.rolledInVain.get(id);
    if (!roll || (vain && (vain.target === roll.target || roll.bytes <= vain.copied))) return;
    const work = path.join(projectDir, "branches", `${AT_POINT_PREFIX}${randomBytes(6).toString("hex")}`);
    const stage = `${work}.stage`;
    try {
      await this.withHistories(projectId, async () => {
        // Up to the segment after the target: the replay stops before that segment's first record.
        await stageWal(chain, roll.target + 1n, (l) => this.liveFolder(projectId, l), stage);
        await copyBase(chain[chain.length - 1] as HistoryLink, work);
      });
      fs.writeFileSync(path.join(work, "recovery.signal"), "");
      await handOver(work);
      if (this.closed) return;
      const { log } = await PgServer.runToExit(
        await this.serverBinaries(major),
        work,
        await freePort(),
        {
          ...ADMIN_SERVER_SETTINGS,
          restore_command: restoreCommand(stage),
          recovery_target_lsn: lsnText(roll.target),
          recovery_target_inclusive: "off",
          // Stopped in recovery, at a restartpoint: replays of later points go on from there.
          recovery_target_action: "shutdown",
          recovery_target_timeline: String(link.origin.tli),
          hot_standby: "off",
          archive_mode: "off",
        },
        RECOVERY_TIMEOUT_MS,
        (server) => this.replaying(server, this.pruneReplays),
      );
      if (this.closed) return; // stopped short by the emulator's shutdown
      const control = controlInfo(work);
      if (!control.stoppedInRecovery)
        throw new Error(`the replay of history ${id} did not stop at ${lsnText(roll.target)}: ${log}`);
      // The new base replays from its restartpoint: on the history's own WAL (a root needs no
      // other's), and past the old base's first segment for a root (else nothing would go).
      const own = parseLsn(link.origin.redo ?? link.origin.lsn);
      const gains =
        control.tli === link.origin.tli &&
        control.redo >= own &&
        (link.origin.from !== undefined || control.redo / SEGMENT_BYTES > own / SEGMENT_BYTES);
      if (!gains) {
        this.rolledInVain.set(id, { target: roll.target, copied: 0 });
        return;
      }
      fs.rmSync(path.join(work, "recovery.signal"));
      for (const name of readdir(path.join(work, "pg_wal")))
        if (!fs.statSync(path.join(work, "pg_wal", name)).isDirectory())
          fs.rmSync(path.join(work, "pg_wal", name));
      // What is the same as in the project's other bases is shared with them (hard links). A root
      // rolls only if that frees more than the base copies (WAL that wrote data once, gzipped, is
      // often smaller than the data); a history that continues another rolls to free its parent.
      const copied = await shareUnchanged(work, projectBases(projectDir));
      if (
        link.origin.from === undefined &&
        segmentBytesBefore(link.dir, control.redo / SEGMENT_BYTES) <= copied
      ) {
        this.rolledInVain.set(id, { target: roll.target, copied });
        this.logger?.debug(
          { project: projectId, history: id, to: lsnText(roll.target), copied },
          "a branch's history keeps its base: rolling it forward would copy more than it frees",
        );
        return;
      }
      await this.withHistories(projectId, async () => {
        // A copy at a point began meanwhile, or a history continuing this one before the target
        // was made: the base stays (the next pruning tries again).
        const limit = continuedFrom(projectDir, id);
        if (
          this.pointCopies.has(projectId) ||
          this.view.pointsPending(projectId) ||
          (limit !== undefined && limit < roll.target)
        )
          return;
        if (!fs.existsSync(link.dir)) return; // no branch reaches it any more: collected meanwhile
        const removed = adoptBase(link, work, roll, control.redo);
        this.rolledInVain.delete(id);
        this.logger?.info(
          {
            project: projectId,
            history: id,
            from: link.origin.lsn,
            to: lsnText(roll.target),
            removed,
            copied,
          },
          "pruned a branch's history to the project's history retention",
        );
      });
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
      fs.rmSync(stage, { recursive: true, force: true });
    }
  }

  /**
   * A consistent copy of a parent's folder: a file copy while no server runs on it; while one
   * does, an online copy through Postgres' low-level backup API (the copy recovers to the backup's
   * end from the WAL copied with it). Copies of one parent asked for before a backup of it ends
   * share that backup (copyBatch): each holds the parent at the backup's end, after every one of
   * them was asked for.
   */
  private copyBranch(parentId: string, parentDir: string, dir: string): Promise<Copied> {
    let batch = this.copyBatches.get(parentId);
    if (!batch) {
      const dirs: string[] = [];
      // Under the parent's lock, so a server starting on it cannot come up mid file copy (nor a
      // restore swap its folder): the history and timeline read are those of the data copied. The
      // backup's copy is shared after it (that copy is the batch's alone).
      const made = this.withBranch(parentId, () => this.copyBatch(parentId, parentDir, dirs)).then((taken) =>
        this.shareCopy(taken, dirs),
      );
      batch = { dirs, made };
      this.copyBatches.set(parentId, batch);
    }
    batch.dirs.push(dir);
    return batch.made.then((copies) => copies.get(dir) as Promise<Copied>);
  }

  /**
   * Copies the parent's folder for the batch's `dirs` (copies asked for join until it closes): while
   * its server runs, one online copy into the first, closing the batch as its backup ends (shareCopy
   * gives the others theirs); else a file copy of the stopped folder into each (a batch then closes at
   * once: no copy of a stopped folder waits for another), each failing alone.
   */
  private async copyBatch(parentId: string, parentDir: string, dirs: string[]): Promise<BatchTaken> {
    const close = () => {
      if (this.copyBatches.get(parentId)?.dirs === dirs) this.copyBatches.delete(parentId);
    };
    try {
      const history = historyOf(parentDir);
      const tli = controlInfo(parentDir).tli;
      const primary = this.view.primaryOf(parentId);
      const running = primary ? this.servers.get(primary) : undefined;
      const port = primary ? this.portOf(primary) : undefined;
      const stopped = async (): Promise<BatchTaken> => {
        close();
        const failed = new Map<string, unknown>();
        let copied: Copied = { lsn: checkpointLsn(parentDir), tli, history };
        for (const dir of dirs)
          copied = await copyStoppedBranch(parentDir, dir).catch((err: unknown) => {
            failed.set(dir, err);
            return copied;
          });
        return { copied, failed };
      };
      if (port === undefined || !running) return await stopped();
      const first = dirs[0] as string;
      let endedAt = 0;
      try {
        // The copy replays the parent's WAL to the backup's end (its segment then switches): its
        // data is the parent's there, what a branch at that LSN holds.
        const backup = await this.copyOnline(parentId, port, parentDir, first, () => {
          endedAt = wallNow();
          close();
        });
        return {
          copied: { lsn: backup.end, tli, history },
          failed: new Map(),
          online: { ...backup, endedAt },
        };
      } catch (err) {
        // Its server stopped under the copy (a suspend, which takes no branch lock; auto-suspend
        // can come at any time): nothing starts it again while this lock is held, so its folder,
        // shut down cleanly, is copied as it is.
        if (!(await stoppedUnder(err, running.server))) throw err;
        fs.rmSync(first, { recursive: true, force: true });
        return await stopped();
      }
    } finally {
      close();
    }
  }

  /**
   * What each of a batch's `dirs` gets of what copyBatch took, after the parent's lock: of an online
   * copy, the others a file copy of the first's, one after another, each failing alone (the first
   * waits for them, its folder their source); and when its data was the parent's, the latest
   * transaction's end the copy replays (else, none in the backup's WAL, the backup's end).
   */
  private async shareCopy(taken: BatchTaken, dirs: string[]): Promise<Map<string, Promise<Copied>>> {
    const copies = new Map<string, Promise<Copied>>();
    const { online } = taken;
    if (!online) {
      for (const dir of dirs) {
        const failure = taken.failed.get(dir);
        copies.set(dir, taken.failed.has(dir) ? Promise.reject(failure) : Promise.resolve(taken.copied));
      }
    } else {
      const first = dirs[0] as string;
      const committedAt =
        (await lastTransactionTime(
          first,
          taken.copied.tli,
          parseLsn(online.start),
          parseLsn(online.end),
        ).catch(() => undefined)) ?? online.endedAt;
      const copied = { ...taken.copied, committedAt };
      const firstSegment = readdir(path.join(first, "pg_wal"))
        .filter((name) => /^[0-9A-F]{24}$/.test(name))
        .sort()[0];
      let previous: Promise<unknown> = Promise.resolve();
      const others: Promise<unknown>[] = [];
      for (const dir of dirs.slice(1)) {
        const made = previous.then(async () => {
          await copyData(first, dir);
          if (firstSegment) await copyWal(first, dir, firstSegment);
          await handOver(dir);
        });
        previous = made.catch(() => {});
        others.push(made);
        copies.set(
          dir,
          made.then(() => copied),
        );
      }
      copies.set(
        first,
        Promise.allSettled(others).then(() => copied),
      );
    }
    // Each is awaited by its member; none may count as unhandled before it is.
    for (const copy of copies.values()) copy.catch(() => {});
    return copies;
  }

  /**
   * The backup API switches the parent's WAL to new segments at the start and the end of the copy:
   * the parent's written data counts up to the copy's start, and on from its end.
   */
  private async copyOnline(
    parentId: string,
    port: number,
    parentDir: string,
    dir: string,
    onStopped: () => void = () => {},
  ): Promise<{ start: string; end: string }> {
    this.walCopying.add(parentId);
    try {
      return await this.admin.session(port, async (client) => {
        this.walMeter?.wal(parentId, "wrote", await currentLsn(client));
        const copied = await this.backUp(client, parentDir, dir, onStopped);
        this.walMeter?.wal(parentId, "skip", await currentLsn(client));
        return copied;
      });
    } finally {
      this.walCopying.delete(parentId);
    }
  }

  /**
   * An online copy of `parentDir` into `dir` through the backup API, on the parent's session
   * `client`; resolves to where the backup started and ended (the copy's LSN, where its own WAL
   * begins: the WAL between is the parent's, replayed by the copy at its first start).
   * `onStopped` is called as the backup ends, once its end is fixed.
   */
  private async backUp(
    client: PgClient,
    parentDir: string,
    dir: string,
    onStopped: () => void,
  ): Promise<{ start: string; end: string }> {
    const version = Number((await client.query("SHOW server_version_num")).rows[0].server_version_num);
    const modern = version >= 150000;
    // A temporary slot (gone with this session) keeps the WAL from the backup's start until it
    // is copied, whatever checkpoints happen meanwhile.
    await client.query("SELECT pg_create_physical_replication_slot($1, true, true)", [
      `neon_emulator_copy_${process.pid}_${randomBytes(4).toString("hex")}`,
    ]);
    await client.query(
      modern ? "SELECT pg_backup_start($1, true)" : "SELECT pg_start_backup($1, true, false)",
      ["neon-emulator branch copy"],
    );
    await copyData(parentDir, dir);
    const stopped = await client.query<{ lsn: string; labelfile: string; spcmapfile: string | null }>(
      modern
        ? "SELECT lsn, labelfile, spcmapfile FROM pg_backup_stop(false)"
        : "SELECT lsn, labelfile, spcmapfile FROM pg_stop_backup(false, false)",
    );
    onStopped();
    const label = stopped.rows[0];
    if (!label) throw new Error("pg_backup_stop returned no backup label");
    fs.writeFileSync(path.join(dir, "backup_label"), label.labelfile, { mode: 0o600 });
    if (label.spcmapfile)
      fs.writeFileSync(path.join(dir, "tablespace_map"), label.spcmapfile, { mode: 0o600 });
    // The WAL from the backup's start to its end: what the copy recovers from.
    const start = /START WAL LOCATION: (\S+) \(file ([0-9A-F]{24})\)/.exec(label.labelfile);
    if (!start?.[1] || !start[2]) throw new Error("pg_backup_stop returned an unexpected backup label");
    const tli = Number(/START TIMELINE: (\d+)/.exec(label.labelfile)?.[1] ?? 1);
    await copyWal(parentDir, dir, start[2], segmentName(tli, parseLsn(label.lsn)));
    await handOver(dir);
    return { start: start[1], end: label.lsn };
  }

  /**
   * Makes a new branch's data now, as its create_branch operation would when it comes due (which
   * then finds it made): resolves to the LSN of its parent the copy holds, or to undefined when
   * the copy fails (the operation makes it again, or fails) or takes longer than `waitMs` (it goes on).
   */
  async makeNow(projectId: string, branchId: string, waitMs: number): Promise<string | undefined> {
    await this.cleared;
    const made = this.ensureBranchData(projectId, branchId).then(
      () => this.copiedAt.get(branchId)?.lsn,
      (err: unknown) => {
        // Cut short by the shutdown: its create_branch makes it at the next start.
        if (!(err instanceof EffectCutShort))
          this.logger?.warn({ err, branch: branchId }, "could not copy a new branch's data at its creation");
        return undefined;
      },
    );
    return within(made, waitMs, undefined);
  }

  async snapshot(
    projectId: string,
    branchId: string,
    snapshotId: string,
    point?: string,
  ): Promise<{ lsn: string; size: number }> {
    await this.cleared;
    const branchDir = await this.ensureBranchData(projectId, branchId);
    const dir = this.layout.snapshot(projectId, snapshotId);
    const work = `${dir}.tmp-${process.pid}`;
    fs.rmSync(work, { recursive: true, force: true });
    await makeCopiesFolder(path.dirname(dir));
    try {
      const { lsn } = await this.copyFrom(
        projectId,
        branchId,
        branchDir,
        work,
        parsePoint(point),
        this.requestReplays,
      );
      fs.renameSync(work, dir);
      const size = dataSize(dir);
      // Deleted while it was being copied: its deletion found no folder to remove.
      if (!this.view.snapshotExists(snapshotId)) fs.rmSync(dir, { recursive: true, force: true });
      return { lsn, size };
    } catch (err) {
      fs.rmSync(work, { recursive: true, force: true });
      throw err;
    }
  }

  async historyRange(projectId: string, branchId: string): Promise<HistoryRange | null | undefined> {
    const dir = this.layout.branch(projectId, branchId);
    if (!fs.existsSync(path.join(dir, "PG_VERSION"))) return undefined;
    const history = historyOf(dir);
    if (!history) return null;
    const chain = chainOf(this.layout.project(projectId), history);
    const live = await this.onRunningPrimary(branchId, (port) =>
      this.admin.session(port, currentLsn, "postgres", WAL_POLL_TIMEOUT_MS),
    );
    const start = historyStart(chain);
    const from = parseLsn(start.lsn);
    // A copy no server has run on yet (its checkpoint is its backup's start) holds its start.
    const end = live ? parseLsn(live.value) : maxLsn(parseLsn(checkpointLsn(dir)), from);
    const window = this.historyWindow?.(projectId);
    // Never past the history's end.
    const kept = window === undefined ? undefined : minLsn(keptFrom(chain, window), end);
    return {
      start: start.lsn,
      end: lsnText(end),
      since: start.since,
      ...(kept !== undefined && kept > from ? { keptFrom: lsnText(kept) } : {}),
    };
  }

  /**
   * Runs `work` on a server started on `dir` for the emulator's own work alone (no compute, no
   * client), with ADMIN_SERVER_SETTINGS and `settings`, and stops it after.
   */
  private async onFolder<T>(
    major: number,
    dir: string,
    settings: Record<string, string>,
    work: (port: number) => Promise<T>,
  ): Promise<T> {
    const bin = await this.serverBinaries(major);
    await this.beforeStartOn(dir);
    const server = await PgServer.start(bin, dir, await freePort(), {
      ...ADMIN_SERVER_SETTINGS,
      ...settings,
    });
    try {
      return await work(server.port);
    } finally {
      await server.stop();
    }
  }
  /** onFolder for servers of Postgres `major`. */
  private folderWork(major: number): OnFolder {
    return (dir, settings, work) => this.onFolder(major, dir, settings, work);
  }

  async schema(projectId: string, branchId: string, database: string, point?: string): Promise<string> {
    await this.cleared;
    const at = parsePoint(point);
    if (at)
      return this.atPoint(projectId, branchId, at, (port) =>
        this.admin.session(port, dumpSchema, database).catch((err: { code?: string }) => {
          // 3D000: the database did not exist yet then.
          if (err.code === "3D000")
            throw notFound(`database "${database}" did not exist on branch ${branchId} at that point`);
          throw err;
        }),
      );
    return this.withDatabase(projectId, branchId, database, dumpSchema);
  }

  /**
   * Runs `work` on a server started on a copy of the branch's data replayed to `point` (a folder
   * of its own, removed after; a crash's leftover goes at the next start).
   */
  private async atPoint<T>(
    projectId: string,
    branchId: string,
    point: HistoryPoint,
    work: (port: number) => Promise<T>,
  ): Promise<T> {
    const major = this.view.pgVersion(projectId);
    if (major === undefined) throw new Error(`project ${projectId} no longer exists`);
    const sourceDir = await this.ensureBranchData(projectId, branchId);
    const dir = path.join(path.dirname(sourceDir), `${AT_POINT_PREFIX}${randomBytes(6).toString("hex")}`);
    try {
      await this.copyAt(projectId, branchId, sourceDir, dir, point, this.requestReplays);
      return await this.onFolder(major, dir, {}, work);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  /**
   * Runs `work` as the administrator on one of the branch's databases: through its running
   * primary, or else on a server started for it alone on the branch's folder (its roles and
   * databases brought to the control plane's first) and stopped after, under the branch's lock so
   * no compute starts on the folder meanwhile. No operation is recorded: nothing a client sees runs.
   */
  private async withDatabase<T>(
    projectId: string,
    branchId: string,
    database: string,
    work: (client: PgClient) => Promise<T>,
  ): Promise<T> {
    const running = () => {
      const primary = this.view.primaryOf(branchId);
      return primary ? this.portOf(primary) : undefined;
    };
    const live = await this.onRunningPrimary(branchId, (port) => this.admin.session(port, work, database));
    if (live) return live.value;
    const major = this.view.pgVersion(projectId);
    if (major === undefined) throw new Error(`project ${projectId} no longer exists`);
    const dir = await this.ensureBranchData(projectId, branchId);
    return this.withBranch(branchId, async () => {
      const started = running();
      if (started !== undefined) return this.admin.session(started, work, database);
      return this.onFolder(major, dir, archiving(this.layout.project(projectId), dir), async (port) => {
        await this.admin.session(port, (client) => this.reconcileBranch(client, port, branchId));
        return this.admin.session(port, work, database);
      });
    });
  }

  /**
   * Runs `work` on the port of the branch primary's running server. Undefined when none runs, or
   * when its server stopped under the work (stoppedUnder: a suspend under way, a kill): then once
   * it has exited, so the caller may turn to its folder.
   */
  private async onRunningPrimary<T>(
    branchId: string,
    work: (port: number) => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    const primary = this.view.primaryOf(branchId);
    const live = primary ? this.servers.get(primary) : undefined;
    if (!live?.server.running) return undefined;
    try {
      return { value: await work(live.server.port) };
    } catch (err) {
      if (await stoppedUnder(err, live.server)) return undefined;
      throw err;
    }
  }

  /**
   * Brings the server on `port` to the control plane's roles and databases of the branch (its
   * administrator's `client`); the drops it applied are cleared.
   */
  private async reconcileBranch(
    client: PgClient,
    port: number,
    branchId: string,
    lockTimeoutMs = 0,
  ): Promise<void> {
    const spec = this.view.branchSpec(branchId);
    // Each session waits on a lock that long at most (0: for as long as it takes).
    const bounded = async (c: PgClient) => {
      if (lockTimeoutMs) await c.query(`SET lock_timeout = ${lockTimeoutMs}`);
    };
    await bounded(client);
    const primary = this.view.primaryOf(branchId);
    await reconcile(
      client,
      spec,
      (db, work) =>
        this.admin.session(
          port,
          async (c) => {
            await bounded(c);
            await work(c);
          },
          db,
        ),
      (db) => {
        if (primary) for (const keeper of this.idleSessionKeepers) keeper(primary, db);
      },
      (roles) => {
        // Clients reach a primary once its roles are ready (addressOf): while its start brings them
        // there, the pooled clients waiting for it logged in with the control plane's passwords.
        if (primary && this.servers.get(primary)?.rolesReady)
          for (const ender of this.roleSessionEnders) ender(primary, roles);
      },
    );
    this.dropsApplied?.(branchId, spec.drops);
  }

  /** How many times each branch's data was swapped by a restore in this process (read replicas' copies are dated by it). */
  private readonly dataGenerations = new Map<string, number>();

  /**
   * Branches whose folder, as their primary left it at its last stop (the checkpoint its clean
   * shutdown wrote), held the control plane's roles and databases as the spec with this
   * fingerprint says: a start finding both unchanged has nothing to reconcile, and the client whose
   * connection woke the compute does not wait for an administrator's session. Taken by the next
   * start; dropped when the folder's data is replaced.
   */
  private readonly heldSpecs = new Map<
    string,
    { fingerprint: string; checkpoint: bigint; subscribed: boolean }
  >();

  /** Starts under way, by endpoint: a second start of the same endpoint joins the first. */
  private readonly starting = new Map<string, Promise<void>>();

  private start(endpointId: string): Promise<void> {
    let started = this.starting.get(endpointId);
    if (!started) {
      started = this.startOnce(endpointId).finally(() => this.starting.delete(endpointId));
      this.starting.set(endpointId, started);
    }
    return started;
  }

  private async startOnce(endpointId: string): Promise<void> {
    if (this.portOf(endpointId) !== undefined) return;
    const endpoint = this.view.endpoint(endpointId);
    if (!endpoint) throw new Error(`endpoint ${endpointId} no longer exists`);
    const major = this.view.pgVersion(endpoint.projectId);
    if (major === undefined) throw new Error(`project ${endpoint.projectId} no longer exists`);
    const bin = await this.serverBinaries(major);
    const dir = await this.ensureBranchData(endpoint.projectId, endpoint.branchId);
    const pgSettings = endpointPgSettings(endpoint.settings);
    const { preload, logical } = this.view.projectServerSettings(endpoint.projectId, (library) =>
      hasModule(bin, library),
    );
    // The endpoint's own settings go to a file of its own, so a change to them reaches the running
    // server with a reload (apply_config), as on Neon; what the emulator sets is given on the
    // command line, which a configuration file cannot override.
    const own = ownSettings(preload, pgSettings);
    const settings = {
      ...(preload.length ? { shared_preload_libraries: preload.join(",") } : {}),
      // A branch's history needs its WAL archived, which wal_level=minimal does not allow.
      ...(pgSettings.wal_level?.toLowerCase() === "minimal" ? { wal_level: "replica" } : {}),
      // A folder holding a logical slot (made while an endpoint's pg_settings asked for
      // wal_level=logical) starts with nothing less.
      ...(logical || holdsLogicalSlot(dir) ? { wal_level: "logical" } : {}),
      ...BASE_SETTINGS,
      max_connections: String(maxConnections(endpoint.minCu)),
      ...(this.socketDir ? { unix_socket_directories: await this.ensureSocketDir() } : {}),
    };
    if (endpoint.type === "read_only") {
      await this.startReplica({ ...endpoint, id: endpointId }, bin, dir, settings, own);
      return;
    }
    // The server starts, and the primary's roles and databases are brought to the control plane's,
    // as one piece of work on the branch (an apply_config of the branch waits for it).
    await this.withBranch(endpoint.branchId, async () => {
      const projectDir = this.layout.project(endpoint.projectId);
      // A folder made before history was kept: its history starts now, from a copy of it.
      if (!historyOf(dir)) await this.startRootHistory(major, projectDir, dir, endpoint.branchId);
      const managed = { ...settings, ...archiving(projectDir, dir) };
      const held = this.heldSpecs.get(endpoint.branchId);
      this.heldSpecs.delete(endpoint.branchId);
      const control = controlInfo(dir);
      const holds =
        endpoint.type === "read_write" &&
        held !== undefined &&
        held.fingerprint === specFingerprint(this.view.branchSpec(endpoint.branchId)) &&
        control.clean &&
        control.checkpoint === held.checkpoint;
      await this.beforeStartOn(dir);
      const server = await PgServer.start(bin, dir, await freePort(), {
        ...managed,
        config_file: await this.writeOwnSettings(endpoint.projectId, endpointId, dir, own, managed),
      }).catch((err: unknown) => {
        this.removeEndpointFiles(endpoint.projectId, endpointId);
        throw err;
      });
      const running: Running = {
        server,
        projectId: endpoint.projectId,
        branchId: endpoint.branchId,
        rolesReady: endpoint.type !== "read_write" || holds,
        reconciled: holds,
        managed,
      };
      this.track(endpointId, running);
      if (holds) this.markReconciled(endpointId, running);
      if (endpoint.type !== "read_write") return;
      await this.attachReplicas(endpoint.branchId, server.port);
      // Its WAL's count went on from its stop (a replaced folder has no held spec).
      if (holds) {
        this.noteSubscriptions(endpointId, running, held.subscribed ? 1 : 0);
        return;
      }
      try {
        await this.admin.session(server.port, async (client) => {
          // Where the branch's written data counts from, when its data was just made or replaced.
          this.walMeter?.wal(endpoint.branchId, "begin", await currentLsn(client));
          await this.reconcileBranch(client, server.port, endpoint.branchId);
          this.noteSubscriptions(endpointId, running, await enabledSubscriptions(client));
        });
        this.markReconciled(endpointId, running);
      } catch (err) {
        if (!server.running) throw err;
        // A change the server refuses (made while it was stopped) must not keep the compute from
        // starting: it runs with what could be applied, and the refusal is reported.
        this.logger?.warn(
          { endpoint: endpointId, error: (err as Error).message },
          "the compute started, but refused part of its branch's roles and databases",
        );
      } finally {
        running.rolesReady = true;
      }
    });
  }

  /**
   * A read replica: a hot standby on its own consistent copy of the branch's folder, streaming from
   * the branch's primary when that runs (so it sees the primary's committed writes); writes are
   * refused with 25006. Its folder lasts as long as it runs.
   */
  private async startReplica(
    endpoint: { id: string; projectId: string; branchId: string },
    bin: PgBinaries,
    branchDir: string,
    settings: Record<string, string>,
    own: Record<string, string>,
  ): Promise<void> {
    const dir = path.join(this.layout.replicas(endpoint.projectId, endpoint.branchId), endpoint.id);
    await this.beforeStartOn(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    await makeCopiesFolder(path.dirname(dir));
    // Read before the copy: a restore that swaps the branch's data after it is seen to.
    const generation = this.dataGenerations.get(endpoint.branchId) ?? 0;
    await this.copyBranch(endpoint.branchId, branchDir, dir);
    fs.writeFileSync(path.join(dir, "standby.signal"), "");
    this.writeReplicaPassfile(endpoint.projectId, endpoint.id);
    const primary = this.view.primaryOf(endpoint.branchId);
    const primaryPort = primary ? this.portOf(primary) : undefined;
    if (primaryPort !== undefined)
      fs.appendFileSync(
        path.join(dir, "postgresql.auto.conf"),
        `primary_conninfo = ${configText(this.conninfo(primaryPort, endpoint.projectId, endpoint.id))}\n`,
      );
    await handOver(dir);
    // A hot standby refuses to run with fewer connections than its primary was configured with.
    const primaryCu = primary ? this.view.endpoint(primary)?.minCu : undefined;
    const maxConns = Math.max(Number(settings.max_connections), primaryCu ? maxConnections(primaryCu) : 0);
    const standby: Record<string, string> = {
      ...settings,
      max_connections: String(maxConns),
      hot_standby: "on",
    };
    let server: PgServer | undefined;
    for (let attempt = 0; !server; attempt++) {
      try {
        server = await PgServer.start(bin, dir, await freePort(), {
          ...standby,
          config_file: await this.writeOwnSettings(endpoint.projectId, endpoint.id, dir, own, standby),
        });
      } catch (err) {
        // Nor with less of what else its primary sizes shared memory by (an endpoint's
        // max_prepared_transactions, max_locks_per_transaction, ...): Postgres names each
        // setting it lacks and the primary's value, and the standby may start again with them.
        const lacking = [...(err as Error).message.matchAll(LOWER_THAN_PRIMARY)];
        if (!lacking.length || attempt >= HOT_STANDBY_SETTINGS.length) {
          this.removeEndpointFiles(endpoint.projectId, endpoint.id);
          throw err;
        }
        for (const [, name, value] of lacking) if (name && value) standby[name] = value;
      }
    }
    this.track(endpoint.id, {
      server,
      projectId: endpoint.projectId,
      branchId: endpoint.branchId,
      replicaDir: dir,
      generation,
      rolesReady: true,
      managed: standby,
    });
    // Its primary started meanwhile (computes resumed together), and looked for replicas to
    // attach before this one ran: it streams from it from now on.
    const primaryNow = primary ? this.portOf(primary) : undefined;
    if (primaryNow !== undefined && primaryNow !== primaryPort)
      await this.attachReplicas(endpoint.branchId, primaryNow, endpoint.id);
  }

  /** How a read replica reaches its primary: the administrator's password in its password file. */
  private conninfo(primaryPort: number, projectId: string, replicaId: string): string {
    const passfile = this.layout.replicaPassfile(projectId, replicaId).replace(/[\\']/g, "\\$&");
    return `host=127.0.0.1 port=${primaryPort} user=${ADMIN_USER} passfile='${passfile}' application_name=${replicaId}`;
  }

  private markReconciled(endpointId: string, running: Running): void {
    if (!running.reconciled) writeEndpointFile(this.layout.reconciledMark(running.projectId, endpointId), "");
    running.reconciled = true;
  }

  /** Removes the files a compute's server ran with outside its folder (its settings, a replica's password file, its reconcile's mark). */
  private removeEndpointFiles(projectId: string, endpointId: string): void {
    fs.rmSync(this.layout.ownSettings(projectId, endpointId), { force: true });
    fs.rmSync(this.layout.reconciledMark(projectId, endpointId), { force: true });
    fs.rmSync(this.layout.replicaPassfile(projectId, endpointId), { force: true });
  }

  private writeReplicaPassfile(projectId: string, replicaId: string): void {
    const password = this.admin.password().replace(/[\\:]/g, "\\$&");
    writeEndpointFile(
      this.layout.replicaPassfile(projectId, replicaId),
      `127.0.0.1:*:*:${ADMIN_USER}:${password}\n`,
    );
  }

  /**
   * A branch's primary started (on a new port): its running read replicas stream from it from now
   * on, so they see its commits even when they started while it was stopped.
   */
  private async attachReplicas(branchId: string, primaryPort: number, only?: string): Promise<void> {
    const replicas = [...this.servers].filter(
      ([id, r]) => r.branchId === branchId && r.replicaDir && (only === undefined || id === only),
    );
    if (!replicas.length) return;
    const primary = await this.admin.session(primaryPort, hotStandbySettings).catch(() => undefined);
    for (const [id, replica] of replicas) {
      const attached = await this.admin
        .session(replica.server.port, async (client) => {
          // A standby with fewer connections (or prepared transactions, locks, ...) than its
          // primary pauses its replay at the first WAL that says so (a primary made bigger): it
          // starts again, sized for it.
          const own = await hotStandbySettings(client);
          if (primary && [...primary].some(([name, value]) => (own.get(name) ?? 0) < value)) return false;
          await client.query(
            `ALTER SYSTEM SET primary_conninfo = ${pg().escapeLiteral(this.conninfo(primaryPort, replica.projectId, id))}`,
          );
          await client.query("SELECT pg_reload_conf()");
          return true;
        })
        .catch((err) => {
          this.logger?.warn({ err, endpoint: id }, "could not attach a read replica to its primary");
          return true;
        });
      if (!attached) void this.restartReplica(id);
    }
  }

  /**
   * Read replicas of the branch still starting when its data was swapped (a restore right after a
   * restart resumed them) may have copied the data it replaced: once their starts end, those copied
   * before the swap start again on the new data.
   */
  private async refreshStaleReplicas(branchId: string): Promise<void> {
    const starts = [...this.starting]
      .filter(([id]) => this.view.endpoint(id)?.branchId === branchId)
      .map(([, started]) => started.catch(() => {}));
    await Promise.all(starts);
    const current = this.dataGenerations.get(branchId) ?? 0;
    for (const [id, running] of [...this.servers])
      if (running.branchId === branchId && running.replicaDir && (running.generation ?? current) < current)
        await this.restartReplica(id);
  }

  /** Stops a running read replica and starts it again (a fresh copy, sized for its primary), unless it stopped meanwhile. */
  private async restartReplica(endpointId: string): Promise<void> {
    try {
      // Its own start may be under way (it attached itself to a primary that started meanwhile):
      // that start ends first, or the restart would join it and leave the server stopped.
      await this.starting.get(endpointId)?.catch(() => undefined);
      await this.stop(endpointId);
      // Not one being suspended or deleted meanwhile.
      if (this.meantActive(endpointId)) await this.start(endpointId);
    } catch (err) {
      this.logger?.warn(
        { err, endpoint: endpointId },
        "could not restart a read replica for its resized primary",
      );
    }
  }

  /**
   * Records a running server; it is forgotten (and no longer held awake) when its process exits,
   * however that happens, and started again if it exited unasked.
   */
  private track(endpointId: string, running: Running): void {
    this.servers.set(endpointId, running);
    void running.server.exited.then(async () => {
      const current = this.servers.get(endpointId) === running;
      if (current) this.servers.delete(endpointId);
      this.noteSubscriptions(endpointId, running, 0);
      if (current && !running.stopping) {
        this.dropRoleReader(endpointId);
        if (!running.server.exitedCleanly) await this.endStrays();
        await this.startUnasked(endpointId, running);
      }
    });
  }

  /** Whether the endpoint exists and is active, or heading there (not being suspended or deleted). */
  private meantActive(endpointId: string): boolean {
    const endpoint = this.view.endpoint(endpointId);
    return endpoint !== undefined && (endpoint.pendingState ?? endpoint.currentState) === "active";
  }

  /** When each endpoint's server was last started again after exiting unasked (ms, last minute's). */
  private readonly restarts = new Map<string, number[]>();
  /** Endpoints whose server is being started again after exiting unasked (startUnasked). */
  private readonly restarting = new Set<string>();

  /**
   * A compute's server exited unasked (killed, crashed): an endpoint still meant to be active
   * gets a new one at once, as Neon brings a failed compute back, on the data its folder holds
   * (Postgres' crash recovery); a start that fails, or whose server exits in turn, is tried again
   * (by the one loop under way for the endpoint). After RESTARTS_PER_MINUTE such starts within a
   * minute it is left to the next client, whose connection starts it.
   */
  private async startUnasked(endpointId: string, running: Running): Promise<void> {
    if (this.restarting.has(endpointId)) return;
    this.restarting.add(endpointId);
    try {
      await this.restartLoop(endpointId, running);
    } finally {
      this.restarting.delete(endpointId);
    }
  }

  private async restartLoop(endpointId: string, running: Running): Promise<void> {
    const { exitCode, signalCode } = running.server.proc;
    for (;;) {
      if (this.closed || !this.meantActive(endpointId)) return;
      if (this.portOf(endpointId) !== undefined) return;
      const now = Date.now();
      const recent = (this.restarts.get(endpointId) ?? []).filter((at) => now - at < 60_000);
      const exit = { endpoint: endpointId, code: exitCode, signal: signalCode };
      if (recent.length >= RESTARTS_PER_MINUTE) {
        this.logger?.error(exit, "a compute's server keeps exiting: suspended until a client connects");
        this.giveUp(endpointId);
        return;
      }
      this.restarts.set(endpointId, [...recent, now]);
      this.logger?.warn(exit, "a compute's server exited unasked: starting it again");
      try {
        await this.start(endpointId);
      } catch (err) {
        this.logger?.error({ err, endpoint: endpointId }, "could not start a compute again");
      }
    }
  }

  /** A compute meant to be active that the driver could not start: the control plane suspends it. */
  private giveUp(endpointId: string): void {
    if (this.closed || this.portOf(endpointId) !== undefined) return;
    try {
      this.notStarted?.(endpointId);
    } catch (err) {
      this.logger?.warn({ err, endpoint: endpointId }, "could not suspend a compute that did not start");
    }
  }

  /** How many enabled subscriptions a running primary holds (`count`): held awake while there are any. */
  private noteSubscriptions(endpointId: string, running: Running, count: number): void {
    const subscribed = count > 0 && running.server.running;
    if (subscribed === (running.subscribed === true)) return;
    running.subscribed = subscribed;
    try {
      this.keepAwake?.(endpointId, subscribed ? 1 : -1);
    } catch (err) {
      this.logger?.warn({ err, endpoint: endpointId }, "could not record a compute's subscriptions");
    }
  }

  private async stop(endpointId: string): Promise<void> {
    const running = this.servers.get(endpointId);
    if (!running) return;
    running.stopping = true;
    // What SQL did to the roles since they were last read goes to the control plane before the
    // server stops, so its next start does not undo it.
    // The reader's short timeouts (a login waits on it) give way under load: once more on a
    // session of its own with a longer one, since what this read misses is lost.
    // Then, with no client connected (one could change them after the check), whether it holds
    // the control plane's roles and databases: its next start need not bring them there if
    // nothing changed meanwhile (heldSpecs).
    const syncAndCheck = async (client: PgClient) => {
      await this.syncCatalog(endpointId, client);
      if (!running.reconciled) return undefined;
      const spec = this.view.branchSpec(running.branchId);
      const clients = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE backend_type = 'client backend' AND usename IS DISTINCT FROM current_user`,
      );
      if ((clients.rows[0]?.n ?? 1) > 0) return undefined;
      return (await holdsSpec(client, spec)) ? specFingerprint(spec) : undefined;
    };
    const held =
      !running.replicaDir && running.server.running
        ? await this.roleReaders
            .session(endpointId, running.server.port, syncAndCheck)
            .catch(() =>
              this.admin.session(running.server.port, syncAndCheck, "postgres", STOP_SYNC_TIMEOUT_MS),
            )
            .catch((err: unknown) => {
              this.logger?.warn(
                { err, endpoint: endpointId },
                "could not read the compute's roles and databases before its stop",
              );
              return undefined;
            })
        : undefined;
    this.dropRoleReader(endpointId);
    // Where a primary's clients' WAL ends: its shutdown then moves on to a new segment (archiving
    // the last one into the branch's history), which is not theirs.
    const ended =
      this.walMeter && !running.replicaDir && running.server.running
        ? await this.admin
            .session(running.server.port, currentLsn, "postgres", STOP_MEASURE_TIMEOUT_MS)
            .catch(() => undefined)
        : undefined;
    // Read before the stop, which clears it once the process exits.
    const subscribed = running.subscribed === true;
    const stoppedAt = Date.now();
    await running.server.stop();
    if (this.servers.get(endpointId) === running) this.servers.delete(endpointId);
    // Killed (its stop timed out, or by hand meanwhile): what it left ends before its folder goes.
    if (!running.server.exitedCleanly) await this.endStrays();
    if (held !== undefined) this.keepHeldSpec(running, held, subscribed);
    this.removeEndpointFiles(running.projectId, endpointId);
    if (running.replicaDir) fs.rmSync(running.replicaDir, { recursive: true, force: true });
    else {
      this.measureStopped(running.projectId, running.branchId, ended);
      // Its shutdown archived its last segments, the last one a switch ended: those trimmed before
      // the history is measured (consumption's instant restore bytes), so the measure stays true
      // (a backlog, an older folder's, is the background's).
      const history = namedHistory(this.layout.branch(running.projectId, running.branchId));
      const dir = history && path.join(historiesDir(this.layout.project(running.projectId)), history);
      if (dir)
        await this.trimSegments(
          archivedIn(dir).filter(
            (file) => (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= stoppedAt,
          ),
        );
      this.measureHistories(running.projectId);
    }
  }

  /** A primary that held the spec with `fingerprint` stopped: kept with its folder's shutdown checkpoint, if it shut down cleanly. */
  private keepHeldSpec(running: Running, fingerprint: string, subscribed: boolean): void {
    try {
      const info = controlInfo(this.layout.branch(running.projectId, running.branchId));
      if (info.clean)
        this.heldSpecs.set(running.branchId, {
          fingerprint,
          checkpoint: info.checkpoint,
          subscribed,
        });
    } catch {
      // its folder is gone (a deleted branch or project)
    }
  }

  /** Reports the WAL the project's histories hold (instant restore storage). */
  private measureHistories(projectId: string): void {
    if (!this.walMeter || !fs.existsSync(this.layout.project(projectId))) return;
    this.walMeter.history(projectId, historyBytesByBranch(this.layout.project(projectId)));
  }

  /**
   * A primary stopped: its WAL ends where it was measured just before the stop, and the count goes
   * on from its shutdown checkpoint; unmeasured, at its shutdown checkpoint.
   */
  private measureStopped(projectId: string, branchId: string, ended: string | undefined): void {
    let lsn: string;
    try {
      lsn = checkpointLsn(this.layout.branch(projectId, branchId));
    } catch {
      return; // its folder is gone (a deleted branch or project)
    }
    if (ended === undefined) {
      this.walMeter?.wal(branchId, "wrote", lsn);
      return;
    }
    this.walMeter?.wal(branchId, "wrote", ended);
    this.walMeter?.wal(branchId, "skip", lsn);
  }

  /**
   * Brings the branch's running primary to the control plane's roles and databases. A statement
   * waiting on a client's lock (a deleted role's REASSIGN OWNED while a client holds one of its
   * tables) gives way after APPLY_LOCK_TIMEOUT_MS and the change is tried again: between tries
   * the branch's other work (its deletion, a restore, a copy of it) goes on, rather than waiting
   * behind a lock a client may hold for as long as it likes.
   */
  private async applyConfig(branchId: string): Promise<void> {
    while (await this.applyConfigOnce(branchId)) await new Promise((r) => setTimeout(r, APPLY_RETRY_MS));
  }

  /** One try of applyConfig; true when a lock held by a client stopped it. */
  private applyConfigOnce(branchId: string): Promise<boolean> {
    return this.withBranch(branchId, async () => {
      const primary = this.view.primaryOf(branchId);
      const port = primary ? this.portOf(primary) : undefined;
      // A branch without a running primary gets its roles and databases when its primary starts.
      if (port === undefined || !primary) return false;
      // What SQL did to the roles and databases this change does not touch is taken first, so it is not undone.
      await this.syncCatalog(primary).catch((err: unknown) =>
        this.logger?.warn({ err, endpoint: primary }, "could not read the compute's roles and databases"),
      );
      const running = this.servers.get(primary);
      try {
        await this.admin.session(port, (client) =>
          this.reconcileBranch(client, port, branchId, APPLY_LOCK_TIMEOUT_MS),
        );
      } catch (err) {
        if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) return true;
        // The compute stopped under it (a suspend or restart at the same time): the change is
        // the control plane's, and the compute's next start brings it there, as on Neon. Only
        // what Postgres refuses fails the operation (and is taken back), and a session ended
        // by a server that goes on (a backend's crash, a pg_terminate_backend).
        if (running && (await stoppedUnder(err, running.server))) return false;
        throw err;
      }
      if (running) this.markReconciled(primary, running);
      return false;
    });
  }

  /**
   * Stops the project's servers and removes its folders. Each branch's servers stop under that
   * branch's lock, so a server still starting (or a copy under way) finishes first and is stopped
   * too, never left running on a removed folder.
   */
  private async deleteProject(projectId: string): Promise<void> {
    await this.stopProject(projectId);
    fs.rmSync(this.layout.project(projectId), { recursive: true, force: true });
  }

  /** Stops every server of the project, each under its branch's lock; the folders stay. */
  private async stopProject(projectId: string): Promise<void> {
    const branchIds = new Set(readdir(path.join(this.layout.project(projectId), "branches")));
    for (const running of this.servers.values())
      if (running.projectId === projectId) branchIds.add(running.branchId);
    await Promise.all(
      [...branchIds].map((branchId) => this.withBranch(branchId, () => this.stopBranch(branchId))),
    );
  }

  /** Stops every server on a branch (its primary and its read replicas); returns their endpoints. */
  private async stopBranch(branchId: string): Promise<string[]> {
    const ids = [...this.servers].filter(([, r]) => r.branchId === branchId).map(([id]) => id);
    await Promise.all(ids.map((id) => this.stop(id)));
    return ids;
  }
}

/** A file copy of a branch's stopped folder: its data is the folder's at its checkpoint, in its history. */
async function copyStoppedBranch(from: string, to: string): Promise<Copied> {
  const history = historyOf(from);
  const tli = controlInfo(from).tli;
  await copyStopped(from, to);
  return { lsn: checkpointLsn(to), tli, history };
}

/** Bytes of a branch folder's databases (its `base/`): the branch's logical_size. */
function dataSize(dir: string): number {
  let total = 0;
  const base = path.join(dir, "base");
  for (const entry of fs.readdirSync(base, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  return total;
}

/** Where the server's WAL ends now. */
async function currentLsn(client: PgClient): Promise<string> {
  const { rows } = await client.query<{ lsn: string }>("SELECT pg_catalog.pg_current_wal_lsn()::text AS lsn");
  const lsn = rows[0]?.lsn;
  if (!lsn) throw new Error("the server reported no WAL position");
  return lsn;
}

/** The latest checkpoint's LSN recorded in a folder's pg_control, as X/X. */
function checkpointLsn(dir: string): string {
  return lsnText(controlInfo(dir).checkpoint);
}

/** A copy of a branch's data: the LSN it was taken at, its timeline, and the history it continues (none kept: undefined). */
interface Copied {
  lsn: string;
  tli: number;
  history: string | undefined;
  /**
   * Where the copy's own WAL begins, when not at `lsn`: an online copy's backup end, a replay's
   * switch to its new timeline.
   */
  startsAt?: string | undefined;
  /**
   * When (wall ms) its data was the source's: for a copy replayed to an LSN or an online copy,
   * when the last transaction it replays ended (an online copy with none: when its backup ended).
   */
  committedAt?: number | undefined;
}

/** What copyBatch took of a parent for a batch: the copy (of an online one, its backup's range and end time), and who failed. */
interface BatchTaken {
  copied: Copied;
  failed: Map<string, unknown>;
  online?: { start: string; end: string; endedAt: number };
}

/** The history a copy starts: continuing its source's (none when the source keeps none), from where the copy's own WAL begins. */
function continuing(copied: Copied, branchId: string, inherits: boolean): Origin | undefined {
  if (!copied.history) return undefined;
  return {
    from: copied.history,
    lsn: copied.startsAt ?? copied.lsn,
    tli: copied.tli,
    branchId,
    ...(inherits ? { inherits: true } : {}),
  };
}

/** Where a recovery switched to timeline `tli` (the last line of its history file), if it did. */
function switchPoint(dir: string, tli: number): string | undefined {
  const file = path.join(dir, "pg_wal", `${tli.toString(16).toUpperCase().padStart(8, "0")}.history`);
  if (!fs.existsSync(file)) return undefined;
  const lines = fs.readFileSync(file, "utf8").trim().split("\n");
  return /^\d+\s+([0-9A-F]+\/[0-9A-F]+)/.exec(lines[lines.length - 1] ?? "")?.[1];
}

/** A point in a branch's history: an LSN, or a moment (wall time, as Postgres stamps commits). */
export type HistoryPoint = { lsn: string } | { wallMs: number };

/**
 * An error that says the server stopped or is stopping (its connections ended or refused, its
 * shutdown under way), not that it refused what was asked.
 */
function serverWentAway(err: unknown): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === "string" && /^(57P0[1-3]|08\w{3}|ECONNREFUSED|ECONNRESET|EPIPE)$/.test(code))
    return true;
  return typeof message === "string" && /Connection terminated|shutting down|not queryable/.test(message);
}

/**
 * Whether `err` came from the server stopping under the work that met it: an error that says so,
 * and the server's process exiting within STOP_WAIT_MS.
 */
async function stoppedUnder(err: unknown, server: PgServer): Promise<boolean> {
  if (!serverWentAway(err)) return false;
  return within(
    server.exited.then(() => true),
    STOP_WAIT_MS,
    false,
  );
}

/** The branch row's `history_point` (`lsn:X/X`, or `time:<ms>` to the microsecond), if any. */
function parsePoint(text: string | null | undefined): HistoryPoint | undefined {
  if (!text) return undefined;
  if (text.startsWith("lsn:")) return { lsn: text.slice(4) };
  if (text.startsWith("time:")) return { wallMs: Number(text.slice(5)) };
  return undefined;
}

/** A whole copy of a folder no server runs on: its data and every segment of its timeline (a history's base). */
async function copyWhole(from: string, to: string): Promise<void> {
  await copyData(from, to);
  await copyWal(from, to, segmentName(controlInfo(from).tli, 0n));
}

/**
 * When the last transaction a recovery replayed committed (wall ms, to the microsecond), from its
 * log's "last completed transaction was at log time 2026-11-27 22:00:00.123456+00" (ISO style, in
 * the folder's time zone, offset given); undefined when it replayed none.
 */
function lastCommitTime(log: string): number | undefined {
  const found =
    /last completed transaction was at log time (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?([+-]\d\d)(:\d\d)?/.exec(
      log,
    );
  if (!found) return undefined;
  const fraction = (found[3] ?? "").padEnd(6, "0").slice(0, 6);
  const second = Date.parse(`${found[1]}T${found[2]}${found[4]}${found[5] ?? ":00"}`);
  return Number.isNaN(second) ? undefined : second + Number(fraction) / 1000;
}

/** A wall time (ms, to the microsecond) as recovery_target_time takes it (its parser refuses ISO 8601's T and Z). */
function timestampText(ms: number): string {
  const micros = Math.round(ms * 1000);
  const second = new Date(Math.floor(micros / 1_000_000) * 1000).toISOString().slice(0, 19).replace("T", " ");
  return `${second}.${String(micros % 1_000_000).padStart(6, "0")}+00`;
}

/** A point asked of a branch whose data was made before the emulator kept history. */
function noHistory(branchId: string): Error {
  return unprocessable(
    `branch ${branchId} has no history to replay yet (its data was made before the emulator kept history); its history starts at its compute's next start`,
  );
}

/** A point outside what a branch's history holds. */
function outsideHistory(what: string, branchId: string, start: bigint, end: bigint): Error {
  return badRequest(
    `${what} is outside branch ${branchId}'s history, which holds ${lsnText(start)} to ${lsnText(end)}`,
  );
}
