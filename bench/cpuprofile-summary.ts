/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time by function + location, self time
 * by package/area, and inclusive time of the project's own functions.
 *
 *   npx tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--top 25] [--from <us>] [--to <us>]
 *                                       [--callers <function name>]
 *
 * --callers prints the call stacks (up to 8 frames) that lead to a function, by time spent in it.
 *
 * --from/--to restrict to samples taken in a window of the profile's clock (CLOCK_MONOTONIC
 * microseconds, the same clock as process.hrtime.bigint() / 1000 in any process on the machine).
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SourceMapConsumer } from "source-map-js";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Entry {
  name: string;
  ms: number;
  pct: number;
}

export interface Summary {
  file: string;
  /** The sample window used (profile clock, microseconds), when restricted. */
  window?: { from: number; to: number };
  windowMs: number;
  sampledMs: number;
  /** (idle), (program), (garbage collector) */
  special: Record<string, number>;
  self: Entry[];
  byArea: Entry[];
  inclusiveOwn: Entry[];
}

/**
 * For the esbuild bundle (dist/main.cjs, or the bench's copy of it), the module a function came
 * from (`src/app.ts`, `node_modules/hono/dist/...`), read from the bundle's source map: the bundle
 * is minified, so lines and columns mean nothing by themselves.
 */
const sourceMaps = new Map<string, SourceMapConsumer | null>();
function moduleAt(frame: CallFrame): string | undefined {
  const { url } = frame;
  const file = url.startsWith("file://") ? fileURLToPath(url) : url;
  if (!path.isAbsolute(file) || file.includes("/node_modules/")) return undefined;
  let map = sourceMaps.get(file);
  if (map === undefined) {
    map = null;
    try {
      map = new SourceMapConsumer(JSON.parse(fs.readFileSync(`${file}.map`, "utf8")));
    } catch {
      // no source map beside it: no module attribution
    }
    sourceMaps.set(file, map);
  }
  const source = map?.originalPositionFor({ line: frame.lineNumber + 1, column: frame.columnNumber }).source;
  if (!source) return undefined;
  // Sources are relative to the map's folder (dist/): ../src/app.ts, ../node_modules/hono/...
  const dir = path.dirname(file);
  const module = path.relative(path.dirname(dir), path.resolve(dir, source));
  // drizzle-orm ships source maps naming a ../src/ it does not publish; esbuild follows them to
  // node_modules/src/. It is the only dependency that does.
  return module.startsWith("node_modules/src/") ? `node_modules/drizzle-orm/${module.slice(13)}` : module;
}

function shortUrl(url: string): string {
  if (!url) return "";
  let p = url;
  if (p.startsWith("file://")) p = fileURLToPath(p);
  const nm = p.lastIndexOf("node_modules/");
  if (nm >= 0) return p.slice(nm + "node_modules/".length);
  const dist = p.indexOf("/dist/");
  if (dist >= 0) return p.slice(dist + 1);
  return path.basename(p) === p ? p : p.replace(/^.*\/(src|bench)\//, "$1/");
}

/** node:internal, a package name (with scope), the project's own dist/ files, or the special nodes. */
function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith("(") ? functionName : "(native / V8 builtins)";
  if (url.startsWith("node:")) return "node: internals";
  const mod = moduleAt(frame);
  if (mod?.startsWith("node_modules/")) {
    const parts = mod.slice("node_modules/".length).split("/");
    return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
  }
  if (mod) return `emulator ${mod.split("/").slice(0, 2).join("/")}`;
  const short = shortUrl(url);
  if (url.includes("node_modules/")) {
    const parts = short.split("/");
    return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
  }
  if (short.startsWith("dist/")) return `emulator ${short.split("/").slice(0, 2).join("/")}`;
  return short;
}

function label(frame: CallFrame): string {
  const fn = frame.functionName || "(anonymous)";
  const u = shortUrl(frame.url);
  const mod = moduleAt(frame);
  if (mod) return `${fn}  ${mod.replace(/^node_modules\//, "")} (${u}:${frame.lineNumber + 1})`;
  return u ? `${fn}  ${u}:${frame.lineNumber + 1}` : fn;
}

export function summarise(file: string, opts: { top?: number; from?: number; to?: number } = {}): Summary {
  const prof = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile;
  const top = opts.top ?? 25;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of prof.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  // Sample i lasts until sample i+1 (the last one until endTime).
  const times: number[] = [];
  let t = prof.startTime;
  for (const d of prof.timeDeltas) {
    t += d;
    times.push(t);
  }
  const self = new Map<string, number>();
  const area = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let sampled = 0;
  const from = opts.from ?? -Infinity;
  const to = opts.to ?? Infinity;
  for (let i = 0; i < prof.samples.length; i++) {
    const at = times[i] as number;
    if (at < from || at > to) continue;
    const dur = ((i + 1 < times.length ? (times[i + 1] as number) : prof.endTime) - at) / 1000;
    if (dur <= 0) continue;
    sampled += dur;
    const node = byId.get(prof.samples[i] as number);
    if (!node) continue;
    const key = label(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + dur);
    const a = areaOf(node.callFrame);
    area.set(a, (area.get(a) ?? 0) + dur);
    // Inclusive time of the emulator's own functions (each counted once per sample).
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const f = (byId.get(id) as ProfileNode).callFrame;
      if (!moduleAt(f)?.startsWith("src/")) continue;
      const k = label(f);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + dur);
    }
  }
  const entries = (m: Map<string, number>, n: number): Entry[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), pct: Math.round((ms / sampled) * 1000) / 10 }));
  const special: Record<string, number> = {};
  for (const s of ["(idle)", "(program)", "(garbage collector)"]) special[s] = Math.round(self.get(s) ?? 0);
  return {
    file,
    ...(opts.from !== undefined && opts.to !== undefined ? { window: { from: opts.from, to: opts.to } } : {}),
    windowMs: Math.round(((Number.isFinite(to) ? to : prof.endTime) - Math.max(from, prof.startTime)) / 1000),
    sampledMs: Math.round(sampled),
    special,
    self: entries(self, top),
    byArea: entries(area, 20),
    inclusiveOwn: entries(inclusive, top),
  };
}

export function renderSummary(s: Summary): string {
  const busy = s.sampledMs - (s.special["(idle)"] ?? 0);
  const table = (title: string, rows: Entry[]) =>
    [
      `  ${title}`,
      ...rows.map((r) => `    ${String(r.ms).padStart(7)} ms ${r.pct.toFixed(1).padStart(5)}%  ${r.name}`),
    ].join("\n");
  return [
    `${path.basename(s.file)}: ${s.sampledMs} ms sampled, ${busy} ms not idle; GC ${s.special["(garbage collector)"]} ms, (program) ${s.special["(program)"]} ms`,
    table("self time by area:", s.byArea),
    table("top self time (function  location):", s.self),
    table("inclusive time of emulator functions (src/):", s.inclusiveOwn),
  ].join("\n");
}

/** Time spent in (and below) `fn`, grouped by the stack above it. */
export function callers(file: string, fn: string, depth = 8, top = 12): Entry[] {
  const prof = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of prof.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stacks = new Map<string, number>();
  let total = 0;
  let t = prof.startTime;
  const times = prof.timeDeltas.map((d) => {
    t += d;
    return t;
  });
  for (let i = 0; i < prof.samples.length; i++) {
    const dur =
      ((i + 1 < times.length ? (times[i + 1] as number) : prof.endTime) - (times[i] as number)) / 1000;
    let id: number | undefined = prof.samples[i];
    while (id !== undefined && (byId.get(id) as ProfileNode).callFrame.functionName !== fn)
      id = parent.get(id);
    if (id === undefined) continue;
    total += dur;
    const frames: string[] = [];
    for (let p = parent.get(id); p !== undefined && frames.length < depth; p = parent.get(p)) {
      const f = (byId.get(p) as ProfileNode).callFrame;
      if (f.functionName === "(root)") break;
      frames.push(label(f));
    }
    const key = frames.join("\n        <- ");
    stacks.set(key, (stacks.get(key) ?? 0) + dur);
  }
  return [...stacks.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => ({
      name,
      ms: Math.round(ms),
      pct: Math.round((ms / Math.max(total, 1e-9)) * 1000) / 10,
    }));
}

function cli() {
  const args = process.argv.slice(2);
  const file = args.find((a) => a.endsWith(".cpuprofile"));
  const opt = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : undefined;
  };
  if (!file) {
    process.stderr.write(
      "usage: tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--top N] [--from us] [--to us]\n",
    );
    process.exit(2);
  }
  const ci = args.indexOf("--callers");
  if (ci >= 0) {
    const fn = args[ci + 1] as string;
    for (const e of callers(file, fn))
      process.stdout.write(
        `${String(e.ms).padStart(7)} ms ${e.pct.toFixed(1).padStart(5)}%  ${fn}\n        <- ${e.name}\n`,
      );
    return;
  }
  const s = summarise(file, { top: opt("top"), from: opt("from"), to: opt("to") });
  process.stdout.write(`${renderSummary(s)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) cli();
