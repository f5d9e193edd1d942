/**
 * `npm run bench`: measures the emulator in one run, its HTTP API against a bare Hono baseline and
 * its Postgres computes behind the front door against the same computes reached directly, on the
 * same machine; prints a table and writes bench/results.json. See BENCHMARKS.md for how to read it.
 *
 * `npm run bench -- --update-doc` also replaces the table in BENCHMARKS.md (between the
 * bench:begin / bench:end markers) with this run's.
 *
 * Knobs (environment): BENCH_DURATION seconds per load run (5), BENCH_RUNS runs per figure (3),
 * BENCH_SPAWNS start-up samples (10), BENCH_SEQ sequential page reads at 1M rows (2000),
 * BENCH_ADVANCE_REPS 7-day advances on fresh databases (3), BENCH_BIG_OPS rows for the big
 * operations table (1000000), BENCH_QUIET_WAIT longest wait in seconds for a quiet machine
 * before each measured series (15; 0 disables); for the data plane BENCH_CONNECTS sequential
 * connects (50), BENCH_WAKES (10), BENCH_BRANCHES branch copies per kind (3), BENCH_COMPUTES idle
 * computes for the memory figure (20), BENCH_FILL_ROWS ~1 KB rows in the parent branch (100000),
 * BENCH_POOLED clients of the pooler's figure (1000); BENCH_CONSOLE_SEQ sequential reads per console page (200);
 * BENCH_REF=<git ref> to measure that commit (built from `git archive` in a temp folder) instead
 * of the working tree, BENCH_ONLY=control, compute or console (comma-separated) to run some
 * sections only (all by default; a partial run cannot --update-doc).
 *
 * Sections: `control` (the HTTP API against bare Hono, Postgres computes off) and `compute` (the
 * data plane: real Postgres computes behind the front door; lib/compute.ts), `console` (the web
 * console's pages with 100 projects; lib/console.ts).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type ComputeResults, measureCompute, QUERY } from "./lib/compute.js";
import { type ConsoleResults, measureConsole } from "./lib/console.js";
import { Api } from "./lib/http.js";
import { type LoadOptions, runLoad, runSeries, type SeriesResult } from "./lib/load.js";
import {
  buildFromRef,
  buildHash,
  type Child,
  copyBuild,
  EMULATOR_ROOT,
  ROOT,
  randomKey,
  rssMb,
  sleep,
  spawnBaseline,
  spawnEmulator,
  tempDir,
  waitQuiet,
} from "./lib/proc.js";
import {
  type AdvanceResult,
  BASE,
  createProject,
  deleteEndpoints,
  listEndpoints,
  postReadOnlyLoad,
  postReadWriteLoad,
  prepareAdvance,
} from "./lib/scenarios.js";
import { countRows, cursorOf, operationTimes, seedOperations } from "./lib/seed.js";
import type { Pair } from "./lib/serverless.js";
import { median, percentile, round } from "./lib/stats.js";

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : dflt;
};
const DURATION = num("BENCH_DURATION", 5);
const RUNS = num("BENCH_RUNS", 3);
const SPAWNS = num("BENCH_SPAWNS", 10);
const SEQ = num("BENCH_SEQ", 2000);
const ADVANCE_REPS = num("BENCH_ADVANCE_REPS", 3);
const BIG_OPS = num("BENCH_BIG_OPS", 1_000_000);
const CONNECTS = num("BENCH_CONNECTS", 50);
const WAKES = num("BENCH_WAKES", 10);
const BRANCHES = num("BENCH_BRANCHES", 3);
const COMPUTES = num("BENCH_COMPUTES", 20);
const FILL_ROWS = num("BENCH_FILL_ROWS", 100_000);
const POOLED = num("BENCH_POOLED", 1000);
const SEQ_CONSOLE = num("BENCH_CONSOLE_SEQ", 200);
const MID_OPS = Math.min(100_000, BIG_OPS);
const CONNECTIONS = [10, 50];
const WARMUP_SECONDS = 2;
/** Longest wait for a quiet machine before each measured series (0 disables). */
const QUIET_WAIT = Number(process.env.BENCH_QUIET_WAIT ?? 15);
const SECTIONS = ["control", "compute", "console"] as const;
type Section = (typeof SECTIONS)[number];
/** BENCH_ONLY: the sections to run (comma-separated); every section when unset. */
const ONLY: Section[] = (() => {
  const raw = process.env.BENCH_ONLY?.trim();
  if (!raw) return [...SECTIONS];
  const names = raw.split(",").map((s) => s.trim());
  for (const n of names)
    if (!(SECTIONS as readonly string[]).includes(n))
      throw new Error(`BENCH_ONLY: unknown section "${n}" (sections: ${SECTIONS.join(", ")})`);
  return names as Section[];
})();
const selected = (section: Section) => ONLY.includes(section);

async function quiet(what: string) {
  if (QUIET_WAIT <= 0) return;
  const other = await waitQuiet(QUIET_WAIT);
  if (other >= 0.3)
    log(`  (machine still busy before ${what}: other processes use ${other.toFixed(2)} cores)`);
}

const log = (msg: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const REF = process.env.BENCH_REF;

function machine() {
  const cpus = os.cpus();
  let commit = "";
  if (REF) {
    commit = buildFromRef(REF);
    return { ...describe(cpus), commit, buildSha256: buildHash(EMULATOR_ROOT) };
  }
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "src", "migrations", "package.json"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    if (dirty) commit += " + uncommitted changes";
  } catch {
    // not a git checkout
  }
  return { ...describe(cpus), commit, buildSha256: copyBuild() };
}

function describe(cpus: os.CpuInfo[]) {
  return {
    date: new Date().toISOString(),
    nproc: os.availableParallelism(),
    cpu: cpus[0]?.model ?? "unknown",
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    memGb: round(os.totalmem() / 2 ** 30, 1),
    loadavgAtStart: os.loadavg().map((l) => round(l, 2)),
    /** How `npm start` runs node, which the bench does too. */
    start: (
      JSON.parse(fs.readFileSync(path.join(EMULATOR_ROOT, "package.json"), "utf8")) as {
        scripts: { start: string };
      }
    ).scripts.start,
    settings: {
      DURATION,
      RUNS,
      SPAWNS,
      SEQ,
      ADVANCE_REPS,
      BIG_OPS,
      CONNECTIONS,
      CONNECTS,
      WAKES,
      BRANCHES,
      COMPUTES,
      FILL_ROWS,
      sections: ONLY,
    },
  };
}

/** Median start -> first 200 of GET /_emulator/health over `n` spawns. */
async function startups(
  n: number,
  spawn: () => Promise<Child>,
): Promise<{ median: number; samples: number[] }> {
  const samples: number[] = [];
  await quiet("start-up samples");
  for (let i = 0; i < n; i++) {
    const child = await spawn();
    samples.push(round(child.startMs, 1));
    await child.stop();
  }
  return { median: round(median(samples), 1), samples };
}

/** Sequential GETs on one keep-alive connection; latency percentiles in ms. */
async function sequential(api: Api, paths: string[], expectLength?: number) {
  const ms: number[] = [];
  for (const p of paths) {
    const res = await api.request<{ operations?: unknown[] }>("GET", p);
    if (res.status !== 200)
      throw new Error(`GET ${p}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    if (expectLength !== undefined && res.body.operations?.length !== expectLength)
      throw new Error(`GET ${p}: expected ${expectLength} operations, got ${res.body.operations?.length}`);
    ms.push(res.ms);
  }
  return {
    n: ms.length,
    p50: round(percentile(ms, 50), 3),
    p99: round(percentile(ms, 99), 3),
    max: round(Math.max(...ms), 3),
    /** Responses slower than 50 ms: the event loop was blocked (e.g. by a worker pass). */
    over50ms: ms.filter((x) => x > 50).length,
  };
}

async function series(o: Omit<LoadOptions, "connections">, between?: () => Promise<void>) {
  const out: SeriesResult[] = [];
  for (const connections of CONNECTIONS) {
    await quiet(`${o.path} @${connections}`);
    await runLoad({ ...o, connections, duration: WARMUP_SECONDS });
    if (between) await between();
    out.push(await runSeries({ ...o, connections, duration: DURATION }, RUNS, between));
    log(`  ${o.method ?? "GET"} ${o.path} @${connections}: ${out.at(-1)?.rps} req/s`);
  }
  return out;
}

async function idleRss(pid: number): Promise<number> {
  await sleep(2000);
  return round(rssMb(pid), 1);
}

async function measureBaseline() {
  log("baseline: start-up");
  const start = await startups(SPAWNS, () => spawnBaseline());
  const nodeStart = await startups(SPAWNS, () => spawnBaseline([], true));
  const child = await spawnBaseline();
  try {
    const api = new Api(child.url, "", 1);
    await sequential(
      api,
      Array.from({ length: 600 }, () => "/json"),
    );
    const idleRssMb = await idleRss(child.pid);
    log("baseline: load");
    const load = await series({ url: child.url, path: "/json", pid: child.pid });
    const seq = await sequential(
      api,
      Array.from({ length: SEQ }, () => "/json"),
    );
    api.close();
    return {
      startMs: start,
      /** A plain node:http server: what starting node costs on this machine. */
      nodeHttpStartMs: nodeStart,
      load,
      sequential: seq,
      idleRssMb,
      afterLoadRssMb: await idleRss(child.pid),
    };
  } finally {
    await child.stop();
  }
}

async function measureReads(dir: string) {
  const key = randomKey();
  const db = path.join(dir, "reads.db");
  let child = await spawnEmulator({ db, key });
  let api = new Api(child.url, key);
  try {
    const p = await createProject(api, 9, true);
    const count = (await listEndpoints(api, p.projectId)).length;
    if (count !== 10) throw new Error(`expected 10 endpoints, found ${count}`);
    const endpointsPath = `${BASE}/projects/${p.projectId}/endpoints`;
    const opsPath = `${BASE}/projects/${p.projectId}/operations?limit=50`;
    // Warm-up: every route measured below plus a few writes on a scratch project.
    const scratch = await createProject(api, 2, true);
    for (let i = 0; i < 200; i++) {
      await api.expect(200, "GET", endpointsPath);
      await api.expect(200, "GET", `${BASE}/api_keys`);
      await api.expect(200, "GET", opsPath);
    }
    for (let i = 0; i < 50; i++)
      await api.expect(201, "POST", `${BASE}/projects/${scratch.projectId}/endpoints`, {
        endpoint: { branch_id: scratch.branchIds[i % 3], type: "read_only" },
      });
    const rssAfterWarmup = await idleRss(child.pid);

    log("emulator: GET endpoints (10 endpoints)");
    const endpoints = await series({ url: child.url, path: endpointsPath, key, pid: child.pid });
    log("emulator: GET api_keys");
    const apiKeys = await series({ url: child.url, path: `${BASE}/api_keys`, key, pid: child.pid });
    const rssAfterLoad = await idleRss(child.pid);

    log(`emulator: seeding ${MID_OPS} operations`);
    api.close();
    await child.stop();
    const opsCount = () => countRows(db, "SELECT count(*) FROM operations");
    const seedMid = seedOperations(db, p.projectId, MID_OPS - opsCount());
    child = await spawnEmulator({ db, key });
    api = new Api(child.url, key);
    log("emulator: GET operations?limit=50");
    const operations = await series({ url: child.url, path: opsPath, key, pid: child.pid });

    log(`emulator: seeding up to ${BIG_OPS} operations`);
    api.close();
    await child.stop();
    const seedBig = seedOperations(db, p.projectId, BIG_OPS - opsCount());
    const times = operationTimes(db, p.projectId);
    child = await spawnEmulator({ db, key });
    const startWithBigDbMs = round(child.startMs, 1);
    api = new Api(child.url, key, 1);
    await sequential(
      api,
      Array.from({ length: 200 }, () => opsPath),
      50,
    );
    await quiet("sequential page reads");
    const firstPage = await sequential(
      api,
      Array.from({ length: SEQ }, () => opsPath),
      50,
    );
    // Cursors at random depths between half-way and the last full page.
    const deepPaths = Array.from({ length: 200 }, () => {
      const at = Math.floor(times.length / 2 + Math.random() * (times.length / 2 - 60));
      return `${opsPath}&cursor=${encodeURIComponent(cursorOf(times[at] as number))}`;
    });
    const deepCursor = await sequential(api, deepPaths, 50);
    await quiet("operations page load at 1M rows");
    const bigLoad = await runLoad({
      url: child.url,
      path: opsPath,
      key,
      pid: child.pid,
      connections: 10,
      duration: DURATION,
    });
    return {
      endpoints,
      apiKeys,
      operations,
      operationsRows: { mid: MID_OPS, big: opsCount(), bigInProject: times.length },
      seedSeconds: { mid: round(seedMid.seconds, 1), big: round(seedBig.seconds, 1) },
      bigTable: { firstPage, deepCursor, load: bigLoad, startMs: startWithBigDbMs },
      rss: { afterWarmupMb: rssAfterWarmup, afterLoadMb: rssAfterLoad },
    };
  } finally {
    api.close();
    await child.stop();
  }
}

async function measureWrites(dir: string) {
  const key = randomKey();
  const child = await spawnEmulator({ db: path.join(dir, "writes.db"), key });
  const api = new Api(child.url, key);
  try {
    const p = await createProject(api, 9, true);
    let deleted = 0;
    const cleanup = async () => {
      deleted += await deleteEndpoints(api, p.projectId, (e) => e.type === "read_only");
    };
    log("emulator: POST endpoints (read_only, round-robin over 10 branches)");
    const readOnly = await series(
      { ...postReadOnlyLoad({ url: child.url, key, pid: child.pid }, p.projectId, p.branchIds) },
      cleanup,
    );
    await cleanup();

    log("emulator: POST endpoints (read_write cross-check, one fresh branch per request)");
    const poolSize = 1000;
    const pool = await createProject(api, poolSize, false, 8);
    const readWrite = await runLoad(
      postReadWriteLoad(
        { url: child.url, key, pid: child.pid, connections: 10 },
        pool.projectId,
        pool.branchIds.slice(1),
      ),
    );
    return { readOnly, readWrite: { ...readWrite, pool: poolSize }, deletedBetweenRuns: deleted };
  } finally {
    api.close();
    await child.stop();
  }
}

async function measureAdvance(dir: string) {
  const runs: Omit<AdvanceResult, "window">[] = [];
  for (let i = 0; i < ADVANCE_REPS; i++) {
    const key = randomKey();
    const child = await spawnEmulator({ db: path.join(dir, `advance-${i}.db`), key, clock: "manual" });
    const api = new Api(child.url, key);
    try {
      const { run } = await prepareAdvance(api);
      await quiet("7-day advance");
      const r = await run();
      const { window: _window, ...rest } = r;
      runs.push({ ...rest, ms: round(r.ms, 1) });
      const ops = Object.values(r.operations).reduce((a, b) => a + b, 0);
      log(`  7-day advance #${i + 1}: ${round(r.ms)} ms, ${ops} operations created`);
    } finally {
      api.close();
      await child.stop();
    }
  }
  // The same advance while another account holds as much (its own clock never advancing): with a
  // clock per account, none of its operations, suspends or checks falls due in this advance.
  const key = randomKey();
  const child = await spawnEmulator({ db: path.join(dir, "advance-loaded.db"), key, clock: "manual" });
  const api = new Api(child.url, key);
  let loadedMs = Number.NaN;
  try {
    const { run } = await prepareAdvance(api);
    const other = await api.expect<{ key: { key: string } }>(201, "POST", "/_emulator/accounts", {
      name: "other",
    });
    const otherApi = new Api(child.url, other.key.key);
    try {
      await createProject(otherApi, 99, true, 4);
    } finally {
      otherApi.close();
    }
    await quiet("7-day advance beside another account");
    loadedMs = round((await run()).ms, 1);
    log(`  7-day advance beside another account's 100 endpoints: ${loadedMs} ms`);
  } finally {
    api.close();
    await child.stop();
  }
  return { ms: round(median(runs.map((r) => r.ms)), 1), runs, loadedMs };
}

interface Row {
  figure: string;
  conns: string;
  value: string;
  p50: string;
  p99: string;
  baseline: string;
  ratio: string;
  cpu: string;
  target: string;
  pass: "pass" | "FAIL" | "";
}

function fmt(n: number | undefined, digits = 1): string {
  return n === undefined || Number.isNaN(n) ? "-" : n.toFixed(digits);
}

function buildRows(r: Results): Row[] {
  const control = controlOf(r);
  return [
    ...(control ? controlRows(control) : []),
    ...(r.compute ? computeRows(r.compute) : []),
    ...(r.console ? consoleRows(r.console) : []),
  ];
}

/** The control-plane section's results, when that section ran. */
function controlOf(r: Results): ControlResults | undefined {
  const { baseline, startup, reads, writes, advance, baselineRecheck } = r;
  if (!baseline || !startup || !reads || !writes || !advance || !baselineRecheck) return undefined;
  return { baseline, startup, reads, writes, advance, baselineRecheck };
}

function controlRows(r: ControlResults): Row[] {
  const rows: Row[] = [];
  const b = r.baseline;
  // The ceiling: the better of the two bare Hono measurements (start and end of the run), so a
  // baseline taken while the machine was busy does not flatter the emulator.
  const base = (c: number) =>
    [...b.load, ...r.baselineRecheck.load]
      .filter((s) => s.connections === c)
      .reduce((best, s) => (s.rps > best.rps ? s : best));
  const loadRows = (figure: string, s: SeriesResult[], minRatio?: number) => {
    for (const x of s) {
      const ratio = x.rps / base(x.connections).rps;
      const non2xx = x.non2xx + x.errors;
      rows.push({
        figure: `${figure}, ${(x.bytesPerResponse / 1024).toFixed(1)} KB${non2xx ? ` [non-2xx/errors: ${non2xx}]` : ""}`,
        conns: String(x.connections),
        value: `${fmt(x.rps, 0)} req/s`,
        p50: fmt(x.p50, 2),
        p99: fmt(x.p99, 2),
        baseline: `${fmt(base(x.connections).rps, 0)} req/s`,
        ratio: `${(ratio * 100).toFixed(1)}%`,
        cpu: `${x.cpuUsPerReq} / ${base(x.connections).cpuUsPerReq}`,
        target: minRatio ? `>= ${minRatio * 100}%` : "",
        pass: minRatio ? (ratio >= minRatio && non2xx === 0 ? "pass" : "FAIL") : "",
      });
    }
  };
  rows.push({
    figure: "start -> first 200 /_emulator/health (empty db, median of spawns)",
    conns: "-",
    value: `${fmt(r.startup.median)} ms`,
    p50: "",
    p99: "",
    baseline: `${fmt(b.startMs.median, 0)} ms (node:http ${fmt(b.nodeHttpStartMs.median, 0)})`,
    ratio: `${(r.startup.median / b.startMs.median).toFixed(2)}x`,
    cpu: "",
    target: "<= 150 ms",
    pass: r.startup.median <= 150 ? "pass" : "FAIL",
  });
  loadRows("GET /projects/{p}/endpoints (10 endpoints)", r.reads.endpoints, 0.25);
  loadRows("POST /projects/{p}/endpoints (read_only, 10 branches)", r.writes.readOnly, 0.1);
  const rw = r.writes.readWrite;
  rows.push({
    figure: `POST endpoints read_write cross-check (${rw.pool} requests, fresh branch each)${rw.non2xx ? ` [non-2xx: ${rw.non2xx}]` : ""}`,
    conns: "10",
    value: `${fmt(rw.rps, 0)} req/s`,
    p50: fmt(rw.p50, 2),
    p99: fmt(rw.p99, 2),
    baseline: `${fmt(base(10).rps, 0)} req/s`,
    ratio: `${((rw.rps / base(10).rps) * 100).toFixed(1)}%`,
    cpu: `${rw.cpuUsPerReq} / ${base(10).cpuUsPerReq}`,
    target: "",
    pass: "",
  });
  loadRows(`GET /projects/{p}/operations?limit=50 (${r.reads.operationsRows.mid} rows)`, r.reads.operations);
  loadRows("GET /api_keys", r.reads.apiKeys);
  const adv = r.advance;
  rows.push({
    figure: `manual clock: advance 7 days, ${adv.runs[0]?.endpoints} endpoints (median of ${adv.runs.length}; ${Object.values(adv.runs[0]?.operations ?? {}).reduce((a, b) => a + b, 0)} operations made)`,
    conns: "1",
    value: `${fmt(adv.ms, 0)} ms`,
    p50: "",
    p99: "",
    baseline: "-",
    ratio: "-",
    cpu: "",
    target: "< 1000 ms",
    pass: adv.ms < 1000 ? "pass" : "FAIL",
  });
  rows.push({
    figure: "the same advance while another account holds as many endpoints (its clock not advancing)",
    conns: "1",
    value: `${fmt(adv.loadedMs, 0)} ms`,
    p50: "",
    p99: "",
    baseline: `${fmt(adv.ms, 0)} ms`,
    ratio: fmt(adv.loadedMs / adv.ms, 2),
    cpu: "",
    target: "ratio < 1.5",
    pass: adv.loadedMs / adv.ms < 1.5 ? "pass" : "FAIL",
  });
  const big = r.reads.bigTable;
  const seqBase = b.sequential;
  rows.push({
    figure: `GET operations?limit=50, ${r.reads.operationsRows.big} rows, ${big.firstPage.n} sequential (p99; max ${fmt(big.firstPage.max, 0)} ms, ${big.firstPage.over50ms} > 50 ms)`,
    conns: "1",
    value: `${fmt(big.firstPage.p99, 2)} ms`,
    p50: fmt(big.firstPage.p50, 2),
    p99: fmt(big.firstPage.p99, 2),
    baseline: `${fmt(seqBase.p99, 2)} ms`,
    ratio: `${(big.firstPage.p99 / seqBase.p99).toFixed(1)}x`,
    cpu: "",
    target: "< 5 ms",
    pass: big.firstPage.p99 < 5 ? "pass" : "FAIL",
  });
  rows.push({
    figure: `  same, 10 connections for ${fmt(big.load.seconds, 0)} s`,
    conns: "10",
    value: `${fmt(big.load.rps, 0)} req/s`,
    p50: fmt(big.load.p50, 2),
    p99: fmt(big.load.p99, 2),
    baseline: `${fmt(base(10).rps, 0)} req/s`,
    ratio: `${((big.load.rps / base(10).rps) * 100).toFixed(1)}%`,
    cpu: `${big.load.cpuUsPerReq} / ${base(10).cpuUsPerReq}`,
    target: "",
    pass: "",
  });
  rows.push({
    figure: `  same, cursor deep in the list (${big.deepCursor.n} sequential, max ${fmt(big.deepCursor.max, 1)} ms)`,
    conns: "1",
    value: `${fmt(big.deepCursor.p99, 2)} ms`,
    p50: fmt(big.deepCursor.p50, 2),
    p99: fmt(big.deepCursor.p99, 2),
    baseline: `${fmt(seqBase.p99, 2)} ms`,
    ratio: `${(big.deepCursor.p99 / seqBase.p99).toFixed(1)}x`,
    cpu: "",
    target: "< 5 ms",
    pass: big.deepCursor.p99 < 5 ? "pass" : "FAIL",
  });
  rows.push({
    figure: "idle RSS after warm-up",
    conns: "-",
    value: `${fmt(r.reads.rss.afterWarmupMb)} MB`,
    p50: "",
    p99: "",
    baseline: `${fmt(b.idleRssMb)} MB`,
    ratio: `${(r.reads.rss.afterWarmupMb / b.idleRssMb).toFixed(2)}x`,
    cpu: "",
    target: "< 80 MB",
    pass: r.reads.rss.afterWarmupMb < 80 ? "pass" : "FAIL",
  });
  rows.push({
    figure: "  idle RSS after the GET load runs",
    conns: "-",
    value: `${fmt(r.reads.rss.afterLoadMb)} MB`,
    p50: "",
    p99: "",
    baseline: `${fmt(b.afterLoadRssMb)} MB`,
    ratio: `${(r.reads.rss.afterLoadMb / b.afterLoadRssMb).toFixed(2)}x`,
    cpu: "",
    target: "",
    pass: "",
  });
  return rows;
}

/** The data-plane rows: the baseline column names its own baseline (the compute's server reached directly, `cp -a`). */
function computeRows(c: ComputeResults): Row[] {
  const rows: Row[] = [];
  const none = { cpu: "", target: "", pass: "" as const };
  const run = c.running;
  rows.push({
    figure: `front door: connect -> first row (SELECT 1), running endpoint, ${run.door.n} sequential (max ${fmt(run.door.max, 1)} ms)`,
    conns: "1",
    value: `${fmt(run.door.p50, 2)} ms`,
    p50: fmt(run.door.p50, 2),
    p99: fmt(run.door.p99, 2),
    baseline: `${fmt(run.direct.p50, 2)} ms direct`,
    ratio: `${(run.door.p50 / run.direct.p50).toFixed(1)}x`,
    ...none,
  });
  rows.push({
    figure: `  same, idle endpoint (suspended through the API): wake, ${c.wake.n} times (max ${fmt(c.wake.max, 0)} ms)`,
    conns: "1",
    value: `${fmt(c.wake.p50, 1)} ms`,
    p50: fmt(c.wake.p50, 1),
    p99: fmt(c.wake.p99, 1),
    baseline: "-",
    ratio: "-",
    cpu: "",
    target: "<= 150 ms",
    pass: c.wake.p50 <= 150 ? "pass" : "FAIL",
  });
  for (const q of c.queries) {
    rows.push({
      figure: `SELECT 1 through the door vs the compute directly (persistent connections, ${fmt(q.door.runs[0]?.seconds, 0)} s runs)`,
      conns: String(q.clients),
      value: `${fmt(q.door.qps, 0)} q/s`,
      p50: fmt(q.door.p50, 2),
      p99: fmt(q.door.p99, 2),
      baseline: `${fmt(q.direct.qps, 0)} q/s direct`,
      ratio: `${(q.ratio * 100).toFixed(1)}%`,
      cpu: `${fmt(q.door.emulatorCpuUsPerQuery, 0)} / -`,
      target: q.clients === 10 ? ">= 80%" : "",
      pass: q.clients === 10 ? (q.ratio >= 0.8 ? "pass" : "FAIL") : "",
    });
    rows.push({
      figure: "  floor: a bare node relay (stream.pipe; no TLS, routing or password) to the same compute",
      conns: String(q.clients),
      value: `${fmt(q.relay.qps, 0)} q/s`,
      p50: fmt(q.relay.p50, 2),
      p99: fmt(q.relay.p99, 2),
      baseline: `${fmt(q.direct.qps, 0)} q/s direct`,
      ratio: `${(q.relayRatio * 100).toFixed(1)}%`,
      ...none,
    });
  }
  const sv = c.serverless;
  const pairRow = (
    figure: string,
    pair: Pair,
    latency: boolean,
    target: string,
    pass: boolean | undefined,
  ) => {
    const ratio = latency ? pair.subject.p50 / pair.baseline.p50 : pair.subject.qps / pair.baseline.qps;
    rows.push({
      figure,
      conns: String(pair.clients),
      value: latency ? `${fmt(pair.subject.p50, 2)} ms` : `${fmt(pair.subject.qps, 0)} q/s`,
      p50: fmt(pair.subject.p50, 2),
      p99: fmt(pair.subject.p99, 2),
      baseline: latency
        ? `${fmt(pair.baseline.p50, 2)} ms @${pair.baselineClients}`
        : `${fmt(pair.baseline.qps, 0)} q/s @${pair.baselineClients}`,
      ratio: latency ? `${ratio.toFixed(1)}x` : `${(ratio * 100).toFixed(1)}%`,
      cpu: `${fmt(pair.subject.emulatorCpuUsPerQuery, 0)} / -`,
      target,
      pass: pass === undefined ? "" : pass ? "pass" : "FAIL",
    });
  };
  pairRow(
    "neon() SELECT 1 over HTTP (POST /sql) vs a direct TCP query on an open connection: p50",
    sv.http1,
    true,
    "<= 2x",
    sv.http1.subject.p50 <= 2 * sv.http1.baseline.p50,
  );
  pairRow(
    "  floor: neon() against a node:http server giving the same answer without Postgres",
    sv.httpFloor1,
    true,
    "",
    undefined,
  );
  pairRow("  same (the emulator), 10 concurrent: throughput", sv.http10, false, "", undefined);
  pairRow(
    "serverless Client over its WebSocket tunnel vs node-postgres through the door (TCP)",
    sv.websocket10,
    false,
    "",
    undefined,
  );
  pairRow(
    `pooled (-pooler, transaction mode) clients on one 0.25 CU compute vs 10 direct clients`,
    sv.pooled,
    false,
    ">= 70%",
    sv.pooled.subject.qps >= 0.7 * sv.pooled.baseline.qps,
  );
  const b = c.branch;
  const branchRow = (how: string, t: { ms: number; samples: number[] }, cp: { ms: number }) =>
    rows.push({
      figure: `${how} (median of ${t.samples.length}; max ${fmt(Math.max(...t.samples), 0)} ms)`,
      conns: "1",
      value: `${fmt(t.ms, 0)} ms`,
      p50: "",
      p99: "",
      baseline: `${fmt(cp.ms, 0)} ms cp -a`,
      ratio: `${(t.ms / cp.ms).toFixed(1)}x`,
      cpu: "",
      target: "<= 500 ms",
      pass: t.ms <= 500 ? "pass" : "FAIL",
    });
  branchRow(
    `POST branch until create_branch finished, parent ${fmt(b.parentBaseMb, 0)} MB of data (folder ${fmt(b.parentFolderMb, 0)} MB) running: online copy`,
    b.online,
    b.cpA.running,
  );
  branchRow("  same, parent suspended: file copy", b.offline, b.cpA.stopped);
  const m = c.memory;
  // Judged on the larger of the machine-wide figure and the one counted per server process: a
  // machine-wide figure made small by others' processes ending meanwhile cannot pass.
  const judged = Math.max(m.perComputeMb, m.perServer.totalMb);
  const others = `${m.othersGrowthMb >= 0 ? "+" : ""}${fmt(m.othersGrowthMb, 0)} MB`;
  rows.push({
    figure: `memory per idle running compute (machine's used memory, ${m.computes} computes; other processes ${others} meanwhile)`,
    conns: "-",
    value: `${fmt(m.perComputeMb)} MB`,
    p50: "",
    p99: "",
    baseline: "-",
    ratio: "-",
    cpu: "",
    target: "<= 16 MB",
    pass: judged <= 16 ? "pass" : "FAIL",
  });
  const held = m.perServer;
  rows.push({
    figure: `  same, held by each server's ${fmt(m.processesPerCompute, 0)} processes: shared memory ${fmt(held.sharedMb)}, anonymous ${fmt(held.anonMb)}, page tables ${fmt(held.pageTablesMb)} MB`,
    conns: "-",
    value: `${fmt(held.totalMb)} MB`,
    p50: "",
    p99: "",
    baseline: "-",
    ratio: "-",
    ...none,
  });
  return rows;
}

/** The console's pages: latency with 100 projects (target p99 < 50 ms) and a first visit's bytes. */
function consoleRows(c: ConsoleResults): Row[] {
  const none = { cpu: "", conns: "1" };
  const rows: Row[] = c.pages.map((p) => ({
    figure: `console GET ${p.page.replace(/\/(?:[a-z]+-[a-z]+-\d{6}|br-[a-z0-9-]+)/g, "/{id}")} (${c.projects} projects, ${(p.bytes / 1024).toFixed(1)} KB)`,
    value: `${fmt(p.p50, 2)} ms`,
    p50: fmt(p.p50, 2),
    p99: fmt(p.p99, 2),
    baseline: `${c.baseline.page}: ${fmt(c.baseline.p50, 2)} ms`,
    ratio: `${(p.p50 / c.baseline.p50).toFixed(2)}x`,
    target: "p99 < 50 ms",
    pass: p.p99 < 50 ? "pass" : "FAIL",
    ...none,
  }));
  rows.push({
    figure: "console first visit: projects page + stylesheet + script",
    value: `${(c.firstLoadBytes / 1024).toFixed(1)} KB`,
    p50: "",
    p99: "",
    baseline: "-",
    ratio: "-",
    target: "< 200 KB",
    pass: c.firstLoadBytes < 200 * 1024 ? "pass" : "FAIL",
    ...none,
    conns: "-",
  });
  return rows;
}

/** A Markdown table (also readable as plain text). */
function renderTable(rows: Row[]): string {
  const head: Row = {
    figure: "Figure",
    conns: "Conns",
    value: "Value",
    p50: "p50 ms",
    p99: "p99 ms",
    baseline: "Baseline (bare Hono unless named)",
    ratio: "Ratio",
    cpu: "CPU us/req emu / hono",
    target: "Target",
    pass: "" as const,
  };
  const cols = Object.keys(head) as (keyof Row)[];
  const cells = [head, ...rows].map((row) =>
    cols.map((c) => (c === "pass" && row === head ? "Pass" : row[c])),
  );
  const widths = cols.map((_, i) => Math.max(...cells.map((r) => (r[i] as string).length)));
  const line = (r: string[]) => `| ${r.map((v, i) => v.padEnd(widths[i] as number)).join(" | ")} |`;
  const sep = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [line(cells[0] as string[]), sep, ...cells.slice(1).map(line)].join("\n");
}

interface ControlResults {
  baseline: Awaited<ReturnType<typeof measureBaseline>>;
  startup: { median: number; samples: number[] };
  reads: Awaited<ReturnType<typeof measureReads>>;
  writes: Awaited<ReturnType<typeof measureWrites>>;
  advance: Awaited<ReturnType<typeof measureAdvance>>;
  /** Bare Hono measured again at the end; the table compares with the better of the two. */
  baselineRecheck: { load: SeriesResult[]; driftPct: Record<string, number> };
}

/** A section's fields are present when it ran (BENCH_ONLY). */
type Results = { machine: ReturnType<typeof machine> } & Partial<ControlResults> & {
    /** The data plane: Postgres computes behind the front door. */
    compute?: ComputeResults;
    /** The web console's pages. */
    console?: ConsoleResults;
    totalSeconds: number;
  };

/** Replaces the generated part of BENCHMARKS.md (between the markers) with this run's table. */
function updateDoc(results: Results, table: string, notes: string) {
  const file = path.join(ROOT, "BENCHMARKS.md");
  const text = fs.readFileSync(file, "utf8");
  const begin = "<!-- bench:begin -->";
  const end = "<!-- bench:end -->";
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`BENCHMARKS.md has no ${begin} ... ${end} section`);
  const m = results.machine;
  const body = [
    begin,
    "",
    `Run ${m.date.slice(0, 16).replace("T", " ")} UTC on ${m.nproc} x ${m.cpu} (${m.memGb} GB), node ${m.node}, ${m.platform};`,
    `code ${m.commit} (build sha256 ${m.buildSha256}); ${m.settings.RUNS} x ${m.settings.DURATION} s per load figure; total ${results.totalSeconds} s.`,
    "",
    table,
    "",
    notes,
    "",
    end,
  ].join("\n");
  fs.writeFileSync(file, text.slice(0, a) + body + text.slice(b + end.length));
}

async function measureControl(dir: string): Promise<ControlResults> {
  const baseline = await measureBaseline();
  log("emulator: start-up");
  let spawned = 0;
  const startup = await startups(SPAWNS, () =>
    spawnEmulator({ db: path.join(dir, `start-${spawned++}.db`), key: randomKey() }),
  );
  const reads = await measureReads(dir);
  const writes = await measureWrites(dir);
  log("emulator: 7-day manual advance");
  const advance = await measureAdvance(dir);

  log("baseline: re-check");
  const again = await spawnBaseline();
  const recheck = await series({ url: again.url, path: "/json", pid: again.pid });
  await again.stop();
  const driftPct: Record<string, number> = {};
  for (const s of recheck) {
    const first = baseline.load.find((x) => x.connections === s.connections)?.rps ?? Number.NaN;
    driftPct[s.connections] = round(((s.rps - first) / first) * 100, 1);
  }
  return { baseline, startup, reads, writes, advance, baselineRecheck: { load: recheck, driftPct } };
}

/** The lines under the table about the control-plane section: noise and the baseline's drift. */
function controlNotes(c: ControlResults, nproc: number): [string, string] {
  const { baseline, reads, writes } = c;
  const recheck = c.baselineRecheck.load;
  const noise = [
    ["bare Hono", baseline.load],
    ["bare Hono (end)", recheck],
    ["GET endpoints", reads.endpoints],
    ["GET api_keys", reads.apiKeys],
    ["GET operations", reads.operations],
    ["POST endpoints", writes.readOnly],
  ] as const;
  const noiseLine = noise
    .map(([name, s]) => `${name} ${Math.max(...s.map((x) => x.maxOtherCpu)).toFixed(2)}`)
    .join(", ");
  return [
    `Other processes' CPU during the load runs (max, cores of ${nproc}): ${noiseLine}.`,
    `Bare Hono at the start / end of the run: ${recheck
      .map((s) => {
        const first = baseline.load.find((x) => x.connections === s.connections)?.rps;
        return `@${s.connections} ${fmt(first, 0)} / ${fmt(s.rps, 0)} req/s`;
      })
      .join(", ")} (ratios use the better one)`,
  ];
}

/** The lines under the table about the data-plane section. */
function computeNotes(c: ComputeResults, nproc: number): string {
  const runs = c.queries.flatMap((q) => [...q.door.runs, ...q.direct.runs]);
  const m = c.memory;
  return (
    `Data plane: Postgres ${c.postgresVersion}; other processes' CPU during the ${QUERY} runs (max, cores of ${nproc}, ` +
    `Postgres servers included) ${Math.max(...runs.map((r) => r.otherCpu)).toFixed(2)}, the bench's own ` +
    `${Math.max(...runs.map((r) => r.benchCpu)).toFixed(2)}; other Postgres servers on the machine ` +
    `${c.otherPostgres.start} at the start / ${c.otherPostgres.end} at the end of the section; ` +
    `machine used memory ${fmt(m.usedBeforeMb, 0)} -> ${fmt(m.usedAfterMb, 0)} MB with ${m.computes} computes, ` +
    `${fmt(m.usedAfterCleanupMb, 0)} MB after their projects were deleted (emulator RSS ` +
    `${fmt(m.emulatorRssBeforeMb)} -> ${fmt(m.emulatorRssAfterMb)} MB; attempt${m.attempts > 1 ? `s: ${m.attempts}, the quietest shown` : "s: 1"})` +
    (m.settled.every(Boolean)
      ? "."
      : `; used memory was still moving when read (${["before", "with the computes", "after deletion"].filter((_, i) => !m.settled[i]).join(", ")}).`)
  );
}

async function main() {
  const t0 = performance.now();
  const updateDocs = process.argv.includes("--update-doc");
  if (updateDocs && ONLY.length < SECTIONS.length)
    throw new Error("--update-doc needs a full run: unset BENCH_ONLY");
  const dir = tempDir();
  try {
    const info = machine();
    log(
      `${info.nproc} x ${info.cpu}, node ${info.node}, load average ${info.loadavgAtStart.join(" ")}; sections: ${ONLY.join(", ")}`,
    );
    const control = selected("control") ? await measureControl(dir) : undefined;
    let compute: ComputeResults | undefined;
    if (selected("compute")) {
      log("data plane: Postgres computes behind the front door");
      compute = await measureCompute({
        duration: DURATION,
        runs: RUNS,
        connects: CONNECTS,
        wakes: WAKES,
        branches: BRANCHES,
        computes: COMPUTES,
        fillRows: FILL_ROWS,
        pooledClients: POOLED,
        log,
        quiet,
      });
    }
    const consoleFigures = selected("console")
      ? await measureConsole({ dir, samples: SEQ_CONSOLE, log, quiet })
      : undefined;
    const results: Results = {
      machine: info,
      ...control,
      ...(compute ? { compute } : {}),
      ...(consoleFigures ? { console: consoleFigures } : {}),
      totalSeconds: round((performance.now() - t0) / 1000, 0),
    };
    const table = renderTable(buildRows(results));
    const out = path.join(ROOT, "bench/results.json");
    fs.writeFileSync(out, `${JSON.stringify({ ...results, table }, null, 2)}\n`);
    const load = `load average at start ${info.loadavgAtStart.join(" ")}, at end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}.`;
    const lines: string[] = [];
    if (control) {
      const [noise, drift] = controlNotes(control, info.nproc);
      lines.push(noise, `${drift}; ${load}`);
    }
    if (compute) lines.push(computeNotes(compute, info.nproc));
    if (!control) lines.push(`L${load.slice(1)}`);
    const notes = lines.join("\n");
    process.stdout.write(
      `\nneon-emulator bench, ${info.date}\n${info.nproc} x ${info.cpu}, node ${info.node}, code ${info.commit}\n\n${table}\n\n${notes}\n` +
        `Total ${results.totalSeconds} s. Full results: ${path.relative(process.cwd(), out)}\n`,
    );
    if (updateDocs) {
      updateDoc(results, table, notes);
      process.stdout.write("BENCHMARKS.md updated.\n");
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
