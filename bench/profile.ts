/**
 * CPU profiles of the emulator under the benchmark's workloads (node --cpu-prof), summarised
 * by bench/cpuprofile-summary.ts. Not part of `npm run bench`; run after `npm run build`:
 *
 *   npx tsx bench/profile.ts [--out <dir>] [scenario ...]
 *
 * Scenarios: startup, endpoints, apikeys, post, advance, bigops, memory (default: all; memory takes no
 * profile, it prints the V8 heap breakdown behind the idle RSS). Profiles and
 * summaries are written to <dir> (default: a new temp dir, printed at the end).
 */
import fs from "node:fs";
import path from "node:path";
import { renderSummary, summarise } from "./cpuprofile-summary.js";
import { Api } from "./lib/http.js";
import { runLoad } from "./lib/load.js";
import { copyBuild, randomKey, rssMb, sleep, spawnEmulator, tempDir } from "./lib/proc.js";
import { BASE, createProject, postReadOnlyLoad, prepareAdvance } from "./lib/scenarios.js";
import { countRows, seedOperations } from "./lib/seed.js";

const args = process.argv.slice(2);
const outIdx = args.indexOf("--out");
const out = outIdx >= 0 ? path.resolve(args[outIdx + 1] as string) : tempDir("neon-profile-");
const chosen = args.filter((a, i) => !a.startsWith("--") && !(outIdx >= 0 && i === outIdx + 1));
const ALL = ["startup", "endpoints", "apikeys", "post", "advance", "bigops", "memory"];
const scenarios = chosen.length ? chosen : ALL;
const LOAD_SECONDS = Number(process.env.PROFILE_SECONDS ?? 8);
/** Extra node flags for the emulator, e.g. PROFILE_NODE_ARGS="--max-semi-space-size=1" to try a setting. */
const EXTRA_ARGS = (process.env.PROFILE_NODE_ARGS ?? "").split(" ").filter(Boolean);
fs.mkdirSync(out, { recursive: true });

const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const log = (msg: string) => process.stderr.write(`[profile] ${msg}\n`);

function profArgs(name: string): string[] {
  return [
    "--cpu-prof",
    `--cpu-prof-dir=${out}`,
    `--cpu-prof-name=${name}.cpuprofile`,
    "--cpu-prof-interval=250",
  ];
}

function report(name: string, window?: { from: number; to: number }) {
  const file = path.join(out, `${name}.cpuprofile`);
  const s = summarise(file, { top: 30, ...window });
  const text = `== ${name}${window ? ` (window ${Math.round((window.to - window.from) / 1000)} ms)` : ""}\n${renderSummary(s)}\n`;
  fs.writeFileSync(path.join(out, `${name}.summary.txt`), text);
  fs.writeFileSync(path.join(out, `${name}.summary.json`), `${JSON.stringify(s, null, 2)}\n`);
  process.stdout.write(`${text}\n`);
}

async function withEmulator(
  name: string,
  clock: "real" | "manual",
  body: (api: Api, url: string, key: string) => Promise<{ from: number; to: number } | undefined>,
  db = path.join(out, `${name}.db`),
) {
  const key = randomKey();
  const child = await spawnEmulator({ db, key, clock, nodeArgs: profArgs(name) });
  const api = new Api(child.url, key);
  let window: { from: number; to: number } | undefined;
  try {
    window = await body(api, child.url, key);
  } finally {
    api.close();
    await child.stop();
  }
  report(name, window);
}

/**
 * RSS, V8 heap and external memory of an idle emulator after the bench's warm-up. The report
 * comes from a preload, which node runs only without the start-up snapshot: this is the same
 * bundle and flags started the long way, so its heap holds the same objects, laid out anew.
 */
async function memory() {
  const key = randomKey();
  const memArgs = [...EXTRA_ARGS, "--import", path.join(import.meta.dirname, "lib/mem-report.mjs")];
  if (process.env.PROFILE_GC) memArgs.push("--expose-gc");
  const child = await spawnEmulator({
    db: path.join(out, "memory.db"),
    key,
    nodeArgs: memArgs,
    withoutSnapshot: true,
  });
  const api = new Api(child.url, key);
  const snap = async (label: string) => {
    await sleep(2000);
    const before = child.output().length;
    child.proc.kill("SIGUSR2");
    await sleep(300);
    const line = child
      .output()
      .slice(before)
      .split("\n")
      .find((l) => l.startsWith("MEMREPORT "));
    const text = `${label}: VmRSS ${rssMb(child.pid).toFixed(1)} MB; ${line?.slice(10)}\n`;
    fs.appendFileSync(path.join(out, "memory.txt"), text);
    process.stdout.write(text);
  };
  try {
    await snap("just started");
    const p = await createProject(api, 9, true);
    for (let i = 0; i < 200; i++) {
      await api.expect(200, "GET", `${BASE}/projects/${p.projectId}/endpoints`);
      await api.expect(200, "GET", `${BASE}/api_keys`);
      await api.expect(200, "GET", `${BASE}/projects/${p.projectId}/operations?limit=50`);
    }
    await snap("after warm-up");
    for (const round of [1, 2]) {
      for (const [label, route] of [
        ["endpoints", `${BASE}/projects/${p.projectId}/endpoints`],
        ["api_keys", `${BASE}/api_keys`],
      ] as const) {
        const r = await runLoad({ url: child.url, key, path: route, connections: 50, duration: 5 });
        await snap(`after 5 s GET ${label} @50 (round ${round}, ${r.ok} requests)`);
      }
    }
  } finally {
    api.close();
    await child.stop();
  }
}

async function main() {
  // A private copy, so a rebuild of dist/ by someone else cannot change the code under the
  // profiler or the line numbers the summaries map back to modules.
  log(`profiling the build copied to ${out} (sha256 ${copyBuild(out)})`);
  for (const s of scenarios) {
    log(s);
    if (s === "startup") {
      await withEmulator("startup", "real", async () => undefined);
    } else if (s === "endpoints") {
      await withEmulator("endpoints", "real", async (api, url, key) => {
        const p = await createProject(api, 9, true);
        const pathname = `${BASE}/projects/${p.projectId}/endpoints`;
        await runLoad({ url, key, path: pathname, connections: 10, duration: 2 });
        const from = nowUs();
        const r = await runLoad({ url, key, path: pathname, connections: 10, duration: LOAD_SECONDS });
        log(`  ${r.rps} req/s`);
        return { from, to: nowUs() };
      });
    } else if (s === "apikeys") {
      // The cheapest authenticated route: what every request pays before its own work.
      await withEmulator("apikeys", "real", async (_api, url, key) => {
        const pathname = `${BASE}/api_keys`;
        await runLoad({ url, key, path: pathname, connections: 10, duration: 2 });
        const from = nowUs();
        const r = await runLoad({ url, key, path: pathname, connections: 10, duration: LOAD_SECONDS });
        log(`  ${r.rps} req/s`);
        return { from, to: nowUs() };
      });
    } else if (s === "post") {
      await withEmulator("post", "real", async (api, url, key) => {
        const p = await createProject(api, 9, true);
        await runLoad({
          ...postReadOnlyLoad({ url, key }, p.projectId, p.branchIds),
          connections: 10,
          duration: 2,
        });
        const from = nowUs();
        const r = await runLoad({
          ...postReadOnlyLoad({ url, key }, p.projectId, p.branchIds),
          connections: 10,
          duration: LOAD_SECONDS,
        });
        log(`  ${r.rps} req/s, non-2xx ${r.non2xx}`);
        return { from, to: nowUs() };
      });
    } else if (s === "advance") {
      await withEmulator("advance", "manual", async (api) => {
        const { run } = await prepareAdvance(api);
        const r = await run();
        log(`  7-day advance ${Math.round(r.ms)} ms`);
        return r.window;
      });
    } else if (s === "bigops") {
      // 1M operations, then sequential first-page reads while the real-clock worker runs.
      const db = path.join(out, "bigops.db");
      const key = randomKey();
      const setup = await spawnEmulator({ db, key });
      const api = new Api(setup.url, key);
      const p = await createProject(api, 9, true);
      api.close();
      await setup.stop();
      seedOperations(db, p.projectId, 1_000_000 - countRows(db, "SELECT count(*) FROM operations"));
      await withEmulator(
        "bigops",
        "real",
        async (api2) => {
          const from = nowUs();
          for (let i = 0; i < 2000; i++)
            await api2.expect(200, "GET", `${BASE}/projects/${p.projectId}/operations?limit=50`);
          await sleep(3000); // idle: only the worker loop runs
          return { from, to: nowUs() };
        },
        db,
      );
    } else if (s === "memory") {
      await memory();
    } else {
      throw new Error(`unknown scenario ${s} (known: ${ALL.join(", ")})`);
    }
  }
  process.stdout.write(`profiles and summaries in ${out}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
