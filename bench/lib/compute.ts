/**
 * The data-plane figures: the emulator with real Postgres computes (NEON_EMULATOR_COMPUTE=postgres)
 * behind its Postgres front door. Connect-to-first-row through the door (running endpoint, and
 * idle = wake), query throughput through the door against the same compute's server reached
 * directly, branch creation with ~100 MB in the parent (online and file copy), and the memory an
 * idle running compute costs the machine. See BENCHMARKS.md.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { Api } from "./http.js";
import {
  type Child,
  cpuMs,
  logLine,
  machineBusyMs,
  randomKey,
  rssMb,
  sleep,
  spawnEmulator,
  spawnFloors,
  tempDir,
} from "./proc.js";
import { BASE } from "./scenarios.js";
import { measureServerless, type ServerlessResults } from "./serverless.js";
import { median, percentile, round } from "./stats.js";

export interface ComputeOptions {
  /** Seconds per measured query-throughput run. */
  duration: number;
  /** Runs per throughput figure (door and direct interleaved). */
  runs: number;
  /** Sequential connects to a running endpoint (each way). */
  connects: number;
  /** Wakes of an idle endpoint. */
  wakes: number;
  /** Branch creations per copy mode. */
  branches: number;
  /** Computes started for the memory figure. */
  computes: number;
  /** Rows of ~1 KB put in the parent branch before the branch-creation figure. */
  fillRows: number;
  /** Pooled clients for the pooler's figure. */
  pooledClients: number;
  log: (msg: string) => void;
  /** Waits (bounded) for a quiet machine before a measured series. */
  quiet: (what: string) => Promise<void>;
}

/** Every operation the driver performs runs as soon as the worker picks it up (real clock). */
const OPERATION_MS =
  "start_compute=0,suspend_compute=0,create_timeline=0,create_branch=0,apply_config=0,delete_tenant=0";
export const QUERY = "SELECT 1";

interface ProjectCreated {
  project: { id: string };
  branch: { id: string };
  endpoints: { id: string }[];
  roles: { name: string; password: string }[];
  connection_uris: { connection_uri: string }[];
  operations: { id: string; action: string }[];
}

interface BranchCreated {
  branch: { id: string };
  endpoints: { id: string }[];
  operations: { id: string; action: string }[];
}

interface Project {
  id: string;
  branchId: string;
  endpointId: string;
  role: string;
  password: string;
  /** The API's connection URI: through the front door. */
  uri: string;
  operationIds: string[];
}

/** Latency summary of a sample, ms. */
export interface Latencies {
  n: number;
  p50: number;
  p99: number;
  max: number;
  samples: number[];
}

function latencies(ms: number[]): Latencies {
  return {
    n: ms.length,
    p50: round(percentile(ms, 50), 2),
    p99: round(percentile(ms, 99), 2),
    max: round(Math.max(...ms), 2),
    samples: ms.map((x) => round(x, 2)),
  };
}

export interface QueryRun {
  qps: number;
  p50: number;
  p99: number;
  queries: number;
  seconds: number;
  /** Emulator CPU microseconds per query (the door relays every byte; ~0 for direct runs). */
  emulatorCpuUsPerQuery: number;
  /** CPU (cores) of this process, the load generator. */
  benchCpu: number;
  /** CPU (cores) of everything else, Postgres servers included. */
  otherCpu: number;
}

export interface QuerySeries {
  clients: number;
  door: { qps: number; p50: number; p99: number; emulatorCpuUsPerQuery: number; runs: QueryRun[] };
  direct: { qps: number; p50: number; p99: number; runs: QueryRun[] };
  /** Median of the per-run door / direct ratios (each pair measured back to back). */
  ratio: number;
  /** A bare relay process to the same compute (the floor of any relay), measured beside them. */
  relay: { qps: number; p50: number; p99: number; runs: QueryRun[] };
  /** Median of the per-run relay / direct ratios. */
  relayRatio: number;
}

export interface BranchTiming {
  ms: number;
  samples: number[];
}

export interface ComputeResults {
  postgresVersion: string;
  running: { door: Latencies; direct: Latencies };
  wake: Latencies;
  queries: QuerySeries[];
  branch: {
    rows: number;
    /** Bytes of the parent's folder (all of it: base/, pg_wal/, ...) and of its base/. */
    parentFolderMb: number;
    parentBaseMb: number;
    online: BranchTiming;
    offline: BranchTiming;
    /**
     * `cp -a` of the parent's folder by the bench itself, right before each timed creation, with
     * the parent running and stopped: the floor of a copy.
     */
    cpA: { running: BranchTiming; stopped: BranchTiming };
  };
  /** The quietest attempt (other processes' memory moved least), and how many were made. */
  memory: MemoryAttempt & { attempts: number };
  serverless: ServerlessResults;
  /** Postgres servers of others on the machine (not this run's) at the start and at the end. */
  otherPostgres: { start: number; end: number };
}

/** Attempts at the memory figure while other processes' memory moves by more than 2 MB per compute. */
const MEMORY_ATTEMPTS = 3;
const QUIET_MEMORY_MB_PER_COMPUTE = 2;

export interface MemoryAttempt {
  computes: number;
  /** Machine used memory (MemTotal - MemAvailable), MB. */
  usedBeforeMb: number;
  usedAfterMb: number;
  usedAfterCleanupMb: number;
  perComputeMb: number;
  /** /proc/meminfo (MB) before, and its changes: with the computes running, after their deletion. */
  meminfo: { before: MemInfo; growth: MemInfo; afterCleanup: MemInfo };
  /** Whether used memory had stopped moving when read: before, with the computes, after deletion. */
  settled: [boolean, boolean, boolean];
  /**
   * Sum of PSS of the computes' processes (postmaster and its children) / computes, MB: what
   * they map now. Lower than the growth: shared memory that exited backends touched (the
   * start's own admin connection) stays allocated without being mapped by anyone.
   */
  pssPerComputeMb: number;
  processesPerCompute: number;
  emulatorRssBeforeMb: number;
  emulatorRssAfterMb: number;
  /**
   * How much the resident memory (RssAnon + RssShmem) of every process outside the emulator's
   * tree (this bench included: other people's test runs, their Postgres servers) changed
   * meanwhile, MB: the noise in the machine-wide figure.
   */
  othersGrowthMb: number;
  /** What each server's processes hold, counted per process (attributedMb), MB per compute. */
  perServer: { totalMb: number; sharedMb: number; anonMb: number; pageTablesMb: number };
}

/** /proc/meminfo fields, MB; `Used` is MemTotal - MemAvailable. */
const MEMINFO_FIELDS = [
  "Used",
  "MemFree",
  "Cached",
  "AnonPages",
  "Shmem",
  "Slab",
  "SUnreclaim",
  "PageTables",
  "KernelStack",
] as const;
type MemInfo = Record<(typeof MEMINFO_FIELDS)[number], number>;

function meminfo(): MemInfo {
  const info = fs.readFileSync("/proc/meminfo", "utf8");
  const mb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(info)?.[1]) / 1024;
  const out = {} as MemInfo;
  for (const f of MEMINFO_FIELDS) out[f] = f === "Used" ? mb("MemTotal") - mb("MemAvailable") : mb(f);
  return out;
}

/**
 * Median of each field over the first 2-second window in which used memory moves by less than
 * 4 MB (at most `maxSeconds`; `settled` says whether such a window came). After a large release
 * (servers ended, folders deleted) MemFree was seen coming back over several seconds on this VM,
 * so a figure read at once can be off by a hundred MB or more.
 */
async function meminfoSettled(maxSeconds = 30): Promise<MemInfo & { settled: boolean }> {
  const window: MemInfo[] = [];
  const deadline = performance.now() + maxSeconds * 1000;
  let settled = false;
  for (;;) {
    window.push(meminfo());
    if (window.length > 8) window.shift();
    if (window.length === 8) {
      const used = window.map((m) => m.Used);
      if (Math.max(...used) - Math.min(...used) < 4) settled = true;
    }
    if (settled || performance.now() > deadline) break;
    await sleep(250);
  }
  const out = {} as MemInfo;
  for (const f of MEMINFO_FIELDS) out[f] = round(median(window.map((x) => x[f])), 1);
  return { ...out, settled };
}

function strip(m: MemInfo): MemInfo {
  const out = {} as MemInfo;
  for (const f of MEMINFO_FIELDS) out[f] = m[f];
  return out;
}

function delta(a: MemInfo, b: MemInfo): MemInfo {
  const out = {} as MemInfo;
  for (const f of MEMINFO_FIELDS) out[f] = round(b[f] - a[f], 1);
  return out;
}

interface Proc {
  pid: number;
  ppid: number;
  cmd: string;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmd = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      out.push({ pid: Number(name), ppid, cmd });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Postmasters (`postgres -D <dir>...`) whose data folder is under `root`, or not under it with `outside`. */
function postmasters(all: Proc[], root: string, outside = false): Proc[] {
  return all.filter((p) => {
    const m = /(?:^|\/)postgres -D (\S+)/.exec(p.cmd);
    if (!m) return false;
    const under = (m[1] as string).startsWith(`${root}/`);
    return outside ? !under : under;
  });
}

/** The postmasters under `root` and all their descendants. */
function serverProcesses(root: string): Proc[] {
  const all = processes();
  const found = postmasters(all, root);
  const pids = new Set(found.map((p) => p.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all)
      if (!pids.has(p.pid) && pids.has(p.ppid)) {
        pids.add(p.pid);
        found.push(p);
        grew = true;
      }
  }
  return found;
}

/** Proportional set size of a process, MB (shared pages split among the processes sharing them). */
function pssMb(pid: number): number {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    return Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Bytes of a file (or a process's shared mapping, through /proc/<pid>/map_files) resident in memory. */
function residentBytes(file: string): number {
  try {
    return Number(
      execFileSync("fincore", ["-b", "-n", "-r", "-o", "RES", file], { encoding: "utf8" }).trim(),
    );
  } catch {
    return 0;
  }
}

/**
 * The memory the servers' processes hold, counted per process rather than machine-wide (so
 * others' activity does not enter it), MB: shared memory resident (the main segment, read with
 * fincore through the postmaster's map_files, since pages touched by backends that have exited
 * stay allocated without being mapped by anyone; the /dev/shm segments they map), anonymous
 * memory (PSS, so pages shared by fork are counted once) and page tables. Page cache (the
 * binaries, the data files) is left out: the kernel gives it back on demand, as MemAvailable says.
 */
function attributedMb(
  procs: Proc[],
  masters: Proc[],
): { sharedMb: number; anonMb: number; pageTablesMb: number } {
  let shared = 0;
  const dsm = new Set<string>();
  for (const m of masters) {
    let maps = "";
    try {
      maps = fs.readFileSync(`/proc/${m.pid}/maps`, "utf8");
    } catch {
      continue;
    }
    for (const line of maps.split("\n")) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.[3] !== "s") continue;
      if (/^\/(dev\/zero|SYSV)/.test(f[5] ?? "")) shared += residentBytes(`/proc/${m.pid}/map_files/${f[0]}`);
    }
  }
  let anonKb = 0;
  let pteKb = 0;
  for (const p of procs) {
    try {
      for (const line of fs.readFileSync(`/proc/${p.pid}/maps`, "utf8").split("\n")) {
        const file = /\s(\/dev\/shm\/\S+)$/.exec(line)?.[1];
        if (file) dsm.add(file);
      }
      anonKb += Number(
        /^Pss_Anon:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${p.pid}/smaps_rollup`, "utf8"))?.[1] ?? 0,
      );
      pteKb += Number(/^VmPTE:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${p.pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  for (const file of dsm) shared += residentBytes(file);
  return { sharedMb: mb(shared), anonMb: round(anonKb / 1024, 1), pageTablesMb: round(pteKb / 1024, 1) };
}

/** The emulator's process and its descendants (its Postgres servers, copies under way). */
function treeOf(all: Proc[], root: number): Set<number> {
  const pids = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all)
      if (!pids.has(p.pid) && pids.has(p.ppid)) {
        pids.add(p.pid);
        grew = true;
      }
  }
  return pids;
}

/** Sum of RssAnon + RssShmem of every process outside the tree of `root`, MB. */
function othersResidentMb(root: number): number {
  const all = processes();
  const ours = treeOf(all, root);
  let kb = 0;
  for (const p of all) {
    if (ours.has(p.pid)) continue;
    try {
      const status = fs.readFileSync(`/proc/${p.pid}/status`, "utf8");
      kb +=
        Number(/^RssAnon:\s+(\d+)/m.exec(status)?.[1] ?? 0) +
        Number(/^RssShmem:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return kb / 1024;
}

/**
 * Starts `computes` computes (a project each, nobody connected), reads the machine's used
 * memory before and with them, then deletes the projects.
 */
async function memoryAttempt(bench: ComputeBench, computes: number): Promise<MemoryAttempt> {
  const pid = bench.child.pid;
  const emulatorRssBeforeMb = round(rssMb(pid), 1);
  const before = await meminfoSettled();
  const othersBefore = othersResidentMb(pid);
  const projects: Project[] = [];
  for (let i = 0; i < computes; i++) projects.push(await bench.createProject());
  for (const q of projects) await bench.finished(q.id, q.operationIds, 10);
  for (const q of projects) {
    const state = await bench.endpointState(q);
    if (state !== "active" || bench.backendPort(q) === undefined)
      throw new Error(`endpoint ${q.endpointId} is ${state}, server port ${bench.backendPort(q)}`);
  }
  await sleep(1000);
  const after = await meminfoSettled();
  const othersGrowthMb = round(othersResidentMb(pid) - othersBefore, 1);
  const projectsDir = path.join(bench.dataDir, "projects");
  const procs = serverProcesses(projectsDir);
  const masters = postmasters(procs, projectsDir);
  if (masters.length !== computes) throw new Error(`expected ${computes} servers, found ${masters.length}`);
  const pss = procs.reduce((sum, q) => sum + pssMb(q.pid), 0);
  const held = attributedMb(procs, masters);
  const emulatorRssAfterMb = round(rssMb(pid), 1);
  for (const q of projects) await bench.deleteProject(q.id);
  const cleanup = await meminfoSettled();
  return {
    computes,
    usedBeforeMb: before.Used,
    usedAfterMb: after.Used,
    usedAfterCleanupMb: cleanup.Used,
    perComputeMb: round((after.Used - before.Used) / computes, 1),
    meminfo: { before: strip(before), growth: delta(before, after), afterCleanup: delta(before, cleanup) },
    settled: [before.settled, after.settled, cleanup.settled],
    pssPerComputeMb: round(pss / computes, 1),
    processesPerCompute: round(procs.length / computes, 1),
    emulatorRssBeforeMb,
    emulatorRssAfterMb,
    othersGrowthMb,
    perServer: {
      totalMb: round((held.sharedMb + held.anonMb + held.pageTablesMb) / computes, 1),
      sharedMb: round(held.sharedMb / computes, 1),
      anonMb: round(held.anonMb / computes, 1),
      pageTablesMb: round(held.pageTablesMb / computes, 1),
    },
  };
}

/** Connects, reads the first row of SELECT 1 (timed), then ends the connection (not timed). */
async function firstRow(config: pg.ClientConfig): Promise<number> {
  const t0 = performance.now();
  const client = new pg.Client(config);
  try {
    await client.connect();
    const res = await client.query(QUERY);
    if (res.rows.length !== 1) throw new Error(`${QUERY}: ${res.rows.length} rows`);
    return performance.now() - t0;
  } finally {
    await client.end().catch(() => {});
  }
}

/** One client of a load: runs QUERY once per call. */
export interface Runner {
  query(): Promise<unknown>;
  end(): Promise<void>;
}

/**
 * A node-postgres connection as a Runner. With `onError`, a client that fails fails its next query
 * (and so the run) and is reported, rather than ending the process.
 */
export const pgRunner =
  (config: pg.ClientConfig, onError?: (err: Error) => void) => async (): Promise<Runner> => {
    const c = new pg.Client(config);
    if (onError) c.on("error", onError);
    await c.connect();
    return { query: () => c.query(QUERY), end: () => c.end() };
  };

/** `clients` persistent connections each running QUERY back to back for `seconds`. */
function queryLoad(
  config: pg.ClientConfig,
  clients: number,
  seconds: number,
  emulatorPid: number,
): Promise<QueryRun> {
  return runnerLoad(pgRunner(config), clients, seconds, emulatorPid);
}

/** `clients` runners (connected 100 at a time) each running QUERY back to back for `seconds`. */
export async function runnerLoad(
  make: () => Promise<Runner>,
  clients: number,
  seconds: number,
  emulatorPid: number,
): Promise<QueryRun> {
  const conns: Runner[] = [];
  try {
    for (let i = 0; i < clients; i += 100)
      conns.push(...(await Promise.all(Array.from({ length: Math.min(100, clients - i) }, make))));
    await Promise.all(
      conns.map(async (c) => {
        for (let i = 0; i < 20; i++) await c.query();
      }),
    );
    const ms: number[] = [];
    const cpu0 = cpuMs(emulatorPid);
    const busy0 = machineBusyMs();
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    await Promise.all(
      conns.map(async (c) => {
        while (performance.now() < end) {
          const s = performance.now();
          await c.query();
          ms.push(performance.now() - s);
        }
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const emulatorMs = cpuMs(emulatorPid) - cpu0;
    const self = process.cpuUsage(self0);
    const selfMs = (self.user + self.system) / 1000;
    const otherMs = Math.max(0, machineBusyMs() - busy0 - selfMs - emulatorMs);
    return {
      qps: round(ms.length / wall, 1),
      p50: round(percentile(ms, 50), 3),
      p99: round(percentile(ms, 99), 3),
      queries: ms.length,
      seconds: round(wall, 2),
      emulatorCpuUsPerQuery: round((emulatorMs * 1000) / Math.max(1, ms.length), 1),
      benchCpu: round(selfMs / 1000 / wall, 2),
      otherCpu: round(otherMs / 1000 / wall, 2),
    };
  } finally {
    await Promise.all(conns.map((c) => c.end().catch(() => {})));
  }
}

/** The emulator's answer to QUERY over `/sql`, asked as `neon()` asks (the floors' canned answer). */
async function sqlAnswer(httpUrl: string, uri: string): Promise<string> {
  const res = await fetch(`${httpUrl}/sql`, {
    method: "POST",
    headers: {
      "Neon-Connection-String": uri,
      "Neon-Raw-Text-Output": "true",
      "Neon-Array-Mode": "true",
      "Content-Type": "application/json",
    },
    body: JSON.stringify({ query: QUERY, params: [] }),
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`POST /sql answered ${res.status}: ${body}`);
  return body;
}

/** The emulator with Postgres computes; resolves with its front door's port (read from its log). */
async function spawnWithComputes(db: string, key: string): Promise<{ child: Child; doorPort: number }> {
  const child = await spawnEmulator({
    db,
    key,
    env: {
      NEON_EMULATOR_COMPUTE: "postgres",
      NEON_EMULATOR_PG_PORT: "0",
      NEON_EMULATOR_OPERATION_MS: OPERATION_MS,
      // Deleted projects go at once (not after Neon's recovery window): the figures count their removal.
      NEON_EMULATOR_PROJECT_RECOVERY_SECONDS: "0",
      // The listening line (with the door's address) is logged at info.
      NEON_EMULATOR_LOG_LEVEL: "info",
    },
  });
  const listened = await logLine<{ postgres?: string }>(child, "neon-emulator listening");
  const port = Number(listened.postgres?.split(":").pop());
  if (!Number.isInteger(port) || port <= 0) {
    await child.stop();
    throw new Error(`the emulator opened no Postgres front door: ${JSON.stringify(listened)}`);
  }
  return { child, doorPort: port };
}

class ComputeBench {
  readonly dataDir: string;
  private api: Api;
  private lastUse = 0;

  constructor(
    readonly child: Child,
    private readonly key: string,
    db: string,
  ) {
    this.dataDir = path.join(path.dirname(db), `${path.basename(db).replace(/\.[^.]*$/, "")}-data`);
    this.api = new Api(child.url, key);
  }

  /**
   * Api.expect on a keep-alive connection, or a new one after 2 s without calls: the server ends
   * idle connections after 5 s, and a request sent as it does fails with "socket hang up".
   */
  private async expect<T = unknown>(status: number, method: string, p: string, body?: unknown): Promise<T> {
    if (performance.now() - this.lastUse > 2000) {
      this.api.close();
      this.api = new Api(this.child.url, this.key);
    }
    try {
      return await this.api.expect<T>(status, method, p, body);
    } finally {
      this.lastUse = performance.now();
    }
  }

  close(): void {
    this.api.close();
  }

  branchDir(projectId: string, branchId: string): string {
    return path.join(this.dataDir, "projects", projectId, "branches", branchId);
  }

  async createProject(): Promise<Project> {
    const body = await this.expect<ProjectCreated>(201, "POST", `${BASE}/projects`, { project: {} });
    const role = body.roles[0];
    const uri = body.connection_uris[0]?.connection_uri;
    if (!role || !uri || !body.endpoints[0]) throw new Error("project created without role, URI or endpoint");
    return {
      id: body.project.id,
      branchId: body.branch.id,
      endpointId: body.endpoints[0].id,
      role: role.name,
      password: role.password,
      uri,
      operationIds: body.operations.map((o) => o.id),
    };
  }

  /** Polls the operations (every `everyMs`) until each is finished; throws when one fails. */
  async finished(projectId: string, ids: string[], everyMs = 2, timeoutMs = 120_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (const id of ids) {
      for (;;) {
        const { operation } = await this.expect<{ operation: { status: string; action: string } }>(
          200,
          "GET",
          `${BASE}/projects/${projectId}/operations/${id}`,
        );
        if (operation.status === "finished") break;
        if (operation.status === "failed")
          throw new Error(
            `operation ${id} (${operation.action}) failed:\n${this.child.output().slice(-3000)}`,
          );
        if (performance.now() > deadline)
          throw new Error(`operation ${id} (${operation.action}) not finished`);
        await sleep(everyMs);
      }
    }
  }

  /** Waits until no operation of the project is unfinished. */
  async settled(projectId: string): Promise<void> {
    const deadline = performance.now() + 120_000;
    for (;;) {
      const { operations } = await this.expect<{ operations: { status: string }[] }>(
        200,
        "GET",
        `${BASE}/projects/${projectId}/operations?limit=100`,
      );
      if (operations.every((o) => o.status === "finished" || o.status === "failed")) return;
      if (performance.now() > deadline) throw new Error(`project ${projectId}: operations still unfinished`);
      await sleep(10);
    }
  }

  async endpointState(p: Project): Promise<string> {
    const { endpoint } = await this.expect<{ endpoint: { current_state: string } }>(
      200,
      "GET",
      `${BASE}/projects/${p.id}/endpoints/${p.endpointId}`,
    );
    return endpoint.current_state;
  }

  /** Suspends the endpoint through the API and waits until it is idle. */
  async suspend(p: Project): Promise<void> {
    const res = await this.expect<{ operations: { id: string }[] }>(
      200,
      "POST",
      `${BASE}/projects/${p.id}/endpoints/${p.endpointId}/suspend`,
    );
    await this.finished(
      p.id,
      res.operations.map((o) => o.id),
      5,
    );
    const deadline = performance.now() + 30_000;
    while ((await this.endpointState(p)) !== "idle") {
      if (performance.now() > deadline) throw new Error(`endpoint ${p.endpointId} did not become idle`);
      await sleep(5);
    }
  }

  /** Makes sure the endpoint runs (a connection through the door wakes it). */
  async ensureRunning(p: Project): Promise<void> {
    if ((await this.endpointState(p)) !== "active" || this.backendPort(p) === undefined)
      await firstRow({ connectionString: p.uri });
  }

  /** The port of the branch's running server: line 4 of its postmaster.pid. */
  backendPort(p: Project): number | undefined {
    try {
      const lines = fs.readFileSync(path.join(this.branchDir(p.id, p.branchId), "postmaster.pid"), "utf8");
      const port = Number(lines.split("\n")[3]);
      return Number.isInteger(port) && port > 0 ? port : undefined;
    } catch {
      return undefined;
    }
  }

  direct(p: Project): pg.ClientConfig {
    const port = this.backendPort(p);
    if (port === undefined) throw new Error(`endpoint ${p.endpointId} has no running server`);
    return { host: "127.0.0.1", port, user: p.role, password: p.password, database: "neondb" };
  }

  /** Deletes a project and waits until its folder and servers are gone. */
  async deleteProject(projectId: string): Promise<void> {
    await this.expect(200, "DELETE", `${BASE}/projects/${projectId}`);
    const dir = path.join(this.dataDir, "projects", projectId);
    await this.gone(dir);
  }

  async gone(dir: string): Promise<void> {
    const deadline = performance.now() + 60_000;
    while (fs.existsSync(dir) || serverProcesses(dir).length > 0) {
      if (performance.now() > deadline) throw new Error(`${dir} still there (or its servers) after 60 s`);
      await sleep(20);
    }
  }

  /**
   * POST /projects/{p}/branches (with a read_write endpoint) until its create_branch is finished;
   * then, untimed, waits for the new endpoint's start, deletes the branch and waits for its folder
   * and server to go.
   */
  async timeBranch(p: Project, name: string): Promise<number> {
    const t0 = performance.now();
    const created = await this.expect<BranchCreated>(201, "POST", `${BASE}/projects/${p.id}/branches`, {
      branch: { name },
      endpoints: [{ type: "read_write" }],
    });
    const op = created.operations.find((o) => o.action === "create_branch");
    if (!op) throw new Error("branch created without a create_branch operation");
    await this.finished(p.id, [op.id]);
    const ms = performance.now() - t0;
    await this.settled(p.id);
    await this.expect(200, "DELETE", `${BASE}/projects/${p.id}/branches/${created.branch.id}`);
    await this.gone(this.branchDir(p.id, created.branch.id));
    await this.settled(p.id);
    return ms;
  }
}

const mb = (bytes: number) => round(bytes / 2 ** 20, 1);

function duBytes(dir: string): number {
  return Number(execFileSync("du", ["-sb", dir], { encoding: "utf8" }).split("\t")[0]);
}

/** Runs every data-plane measurement on one emulator (own temp folder, removed at the end). */
export async function measureCompute(o: ComputeOptions): Promise<ComputeResults> {
  const dir = tempDir("neon-bench-compute-");
  // Postgres runs as uid 65534 when the bench is root: it must get through to the data folder.
  fs.chmodSync(dir, 0o755);
  const db = path.join(dir, "compute.db");
  const key = randomKey();
  const otherAtStart = postmasters(processes(), dir, true).length;
  let child: Child | undefined;
  let floors: Child | undefined;
  let bench: ComputeBench | undefined;
  let leftovers = 0;
  let result: ComputeResults;
  try {
    const spawned = await spawnWithComputes(db, key);
    child = spawned.child;
    bench = new ComputeBench(child, key, db);

    o.log("compute: project with a running endpoint");
    const p = await bench.createProject();
    if (Number(new URL(p.uri).port) !== spawned.doorPort)
      throw new Error(`the connection URI does not point at the front door (${spawned.doorPort}): ${p.uri}`);
    await bench.finished(p.id, p.operationIds, 10);
    const door: pg.ClientConfig = { connectionString: p.uri };
    const version = await (async () => {
      const c = new pg.Client(door);
      await c.connect();
      try {
        return String((await c.query("SHOW server_version")).rows[0]?.server_version);
      } finally {
        await c.end();
      }
    })();

    // 1. Connect to first row, running endpoint: door and direct alternated.
    o.log(`compute: connect -> first row, running endpoint (${o.connects} x door, direct)`);
    await bench.ensureRunning(p);
    for (let i = 0; i < 5; i++) {
      await firstRow(door);
      await firstRow(bench.direct(p));
    }
    await o.quiet("connect -> first row");
    const doorMs: number[] = [];
    const directMs: number[] = [];
    for (let i = 0; i < o.connects; i++) {
      doorMs.push(await firstRow(door));
      directMs.push(await firstRow(bench.direct(p)));
    }
    const running = { door: latencies(doorMs), direct: latencies(directMs) };
    o.log(`  running: door p50 ${running.door.p50} ms, direct p50 ${running.direct.p50} ms`);

    // 2. Wake: suspended through the API, idle, then connect to first row.
    o.log(`compute: connect -> first row, idle endpoint (wake) x ${o.wakes}`);
    const wakeMs: number[] = [];
    await o.quiet("wakes");
    for (let i = 0; i < o.wakes; i++) {
      await bench.suspend(p);
      if (serverProcesses(bench.branchDir(p.id, p.branchId)).length > 0)
        throw new Error("an idle endpoint's server still runs");
      await sleep(250);
      wakeMs.push(await firstRow(door));
      await bench.settled(p.id);
    }
    const wake = latencies(wakeMs);
    o.log(`  wake: p50 ${wake.p50} ms, p99 ${wake.p99} ms`);

    // 3. Query throughput, door vs direct, door and direct runs interleaved; with them, the floors
    // (a bare relay, and a /sql answered without Postgres) in a process of their own.
    const queries: QuerySeries[] = [];
    await bench.ensureRunning(p);
    const spawnedFloors = await spawnFloors(
      await sqlAnswer(child.url, p.uri),
      bench.direct(p).port as number,
    );
    floors = spawnedFloors.child;
    const relay: pg.ClientConfig = { ...bench.direct(p), port: spawnedFloors.relayPort };
    for (const clients of [1, 10]) {
      await o.quiet(`${QUERY} @${clients}`);
      await queryLoad(door, clients, 1, child.pid);
      await queryLoad(bench.direct(p), clients, 1, child.pid);
      await queryLoad(relay, clients, 1, child.pid);
      const doorRuns: QueryRun[] = [];
      const directRuns: QueryRun[] = [];
      const relayRuns: QueryRun[] = [];
      for (let i = 0; i < o.runs; i++) {
        doorRuns.push(await queryLoad(door, clients, o.duration, child.pid));
        directRuns.push(await queryLoad(bench.direct(p), clients, o.duration, child.pid));
        relayRuns.push(await queryLoad(relay, clients, o.duration, child.pid));
      }
      const med = (runs: QueryRun[], k: "qps" | "p50" | "p99" | "emulatorCpuUsPerQuery") =>
        round(median(runs.map((r) => r[k])), k === "qps" ? 1 : 3);
      const series = (runs: QueryRun[]) => ({
        qps: med(runs, "qps"),
        p50: med(runs, "p50"),
        p99: med(runs, "p99"),
        runs,
      });
      const ratio = (runs: QueryRun[]) =>
        round(median(runs.map((r, i) => r.qps / (directRuns[i] as QueryRun).qps)), 4);
      queries.push({
        clients,
        door: { ...series(doorRuns), emulatorCpuUsPerQuery: med(doorRuns, "emulatorCpuUsPerQuery") },
        direct: series(directRuns),
        ratio: ratio(doorRuns),
        relay: series(relayRuns),
        relayRatio: ratio(relayRuns),
      });
      const q = queries.at(-1) as QuerySeries;
      o.log(
        `  ${QUERY} @${clients}: door ${q.door.qps} q/s, direct ${q.direct.qps} q/s (${round(q.ratio * 100, 1)}%), bare relay ${q.relay.qps} q/s (${round(q.relayRatio * 100, 1)}%)`,
      );
    }

    // 3b. The serverless driver (HTTP, WebSocket) and the pooler.
    await bench.ensureRunning(p);
    const serverless = await measureServerless({
      uri: p.uri,
      pooledUri: p.uri.replace(`endpoint%3D${p.endpointId}`, `endpoint%3D${p.endpointId}-pooler`),
      direct: bench.direct(p),
      httpUrl: child.url,
      floorUrl: floors.url,
      emulatorPid: child.pid,
      runs: o.runs,
      seconds: o.duration,
      pooledClients: o.pooledClients,
      log: o.log,
      quiet: o.quiet,
    });
    await floors.stop();

    // The pooler keeps its server sessions (PgBouncer's server_idle_timeout, 600 s): a suspend and
    // a start give the next figures the compute's connection slots back.
    await bench.suspend(p);
    await bench.ensureRunning(p);

    // 4. Branch creation with ~100 MB in the parent.
    o.log(`compute: filling the parent branch (${o.fillRows} rows of ~1 KB)`);
    await bench.ensureRunning(p);
    {
      const c = new pg.Client(door);
      await c.connect();
      try {
        await c.query(
          `CREATE TABLE t AS SELECT g AS id, repeat('x', 1000) AS pad FROM generate_series(1, ${o.fillRows}) g`,
        );
      } finally {
        await c.end();
      }
    }
    const parentDir = bench.branchDir(p.id, p.branchId);
    const parentBaseMb = mb(duBytes(path.join(parentDir, "base")));
    let n = 0;
    // Each copy (timed creation, or the `cp -a` baseline taken right before it) starts with no
    // dirty pages pending, so none pays for the writeback of the one before.
    const cpA: { running: number[]; stopped: number[] } = { running: [], stopped: [] };
    const cpOnce = (into: number[]) => {
      const to = path.join(dir, "cp-baseline");
      execFileSync("sync");
      const t0 = performance.now();
      execFileSync("cp", ["-a", parentDir, to]);
      into.push(performance.now() - t0);
      fs.rmSync(to, { recursive: true, force: true });
      execFileSync("sync");
    };
    o.log(`compute: branch creation, parent running (online copy) x ${o.branches}`);
    const online: number[] = [];
    await o.quiet("branch creation (online copy)");
    for (let i = 0; i < o.branches; i++) {
      await bench.ensureRunning(p);
      await bench.settled(p.id);
      cpOnce(cpA.running);
      online.push(await bench.timeBranch(p, `b${n++}`));
    }
    o.log(`  online: ${online.map((x) => round(x, 0)).join(", ")} ms`);
    o.log(`compute: branch creation, parent suspended (file copy) x ${o.branches}`);
    const offline: number[] = [];
    if ((await bench.endpointState(p)) !== "idle") await bench.suspend(p);
    await o.quiet("branch creation (file copy)");
    for (let i = 0; i < o.branches; i++) {
      if ((await bench.endpointState(p)) !== "idle") await bench.suspend(p);
      await bench.settled(p.id);
      cpOnce(cpA.stopped);
      offline.push(await bench.timeBranch(p, `b${n++}`));
    }
    o.log(`  file copy: ${offline.map((x) => round(x, 0)).join(", ")} ms`);
    const parentFolderMb = mb(duBytes(parentDir));
    const timing = (s: number[]): BranchTiming => ({
      ms: round(median(s), 1),
      samples: s.map((x) => round(x, 1)),
    });
    const branch = {
      rows: o.fillRows,
      parentFolderMb,
      parentBaseMb,
      online: timing(online),
      offline: timing(offline),
      cpA: { running: timing(cpA.running), stopped: timing(cpA.stopped) },
    };
    await bench.deleteProject(p.id);

    // 5. Memory per idle running compute: the quietest of up to MEMORY_ATTEMPTS attempts.
    const attempts: MemoryAttempt[] = [];
    for (let i = 0; i < MEMORY_ATTEMPTS; i++) {
      o.log(
        `compute: memory of ${o.computes} idle running computes${i ? ` (again: other processes' memory moved)` : ""}`,
      );
      await o.quiet("memory");
      attempts.push(await memoryAttempt(bench, o.computes));
      const a = attempts.at(-1) as MemoryAttempt;
      o.log(
        `  ${a.perComputeMb} MB per compute machine-wide, ${a.perServer.totalMb} MB held by its processes; other processes ${a.othersGrowthMb} MB meanwhile`,
      );
      if (Math.abs(a.othersGrowthMb) <= QUIET_MEMORY_MB_PER_COMPUTE * o.computes) break;
    }
    const quietest = attempts.reduce((best, a) =>
      Math.abs(a.othersGrowthMb) < Math.abs(best.othersGrowthMb) ? a : best,
    );
    const memory = { ...quietest, attempts: attempts.length };
    result = {
      postgresVersion: version,
      running,
      wake,
      queries,
      branch,
      memory,
      serverless,
      otherPostgres: { start: otherAtStart, end: postmasters(processes(), dir, true).length },
    };
  } finally {
    bench?.close();
    await floors?.stop();
    await child?.stop();
    // The emulator stops its servers when it stops; any left would be this run's: end them.
    for (const p of postmasters(processes(), dir)) {
      leftovers++;
      o.log(`  a Postgres server was left running (pid ${p.pid}): ending it`);
      try {
        process.kill(p.pid, "SIGQUIT");
      } catch {
        // already gone
      }
    }
    if (leftovers) await sleep(2000);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (leftovers) throw new Error(`${leftovers} Postgres server(s) outlived the emulator`);
  return result;
}
