import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import zlib, { gzipSync } from "node:zlib";
import { wallNow } from "../../platform/clock.js";
import { packageRoot } from "../../platform/package-root.js";
import { readdir } from "./binaries.js";
import { unixTools } from "./child-process.js";
import {
  copyData,
  copyWal,
  HISTORY_FILE,
  lsnText,
  maxLsn,
  parseLsn,
  SEGMENT_BYTES,
  segmentName,
} from "./copy.js";
import { handOver } from "./process.js";
import type { WalRange } from "./wal-scan.js";

/**
 * A branch's history: what point-in-time branching and restore replay (Neon's `parent_lsn`,
 * `parent_timestamp`, `source_lsn`, `source_timestamp`). Every primary archives each WAL segment it
 * completes (gzip) into the history its folder writes to (`<project>/history/<id>/`). A history
 * either starts from a base copy of its own (a stopped data folder: a hard-linked copy of the
 * template for a new project's first branch, a copy for any other root) or continues another at
 * the LSN its branch was copied at (a child branch, a restore's new state). The state of a branch at
 * any point since its history began is then that chain's base plus the WAL of the chain up to the
 * point, replayed by Postgres' own archive recovery.
 */

const ORIGIN_FILE = "origin.json";
const SEGMENT = /^[0-9A-F]{24}$/;
/** An archived WAL segment's file in a history. */
const ARCHIVED_SEGMENT = /^[0-9A-F]{24}\.gz$/;

/** Where a history starts. */
export interface Origin {
  /** The history it continues (absent: it starts from its own `base` folder). */
  from?: string;
  /**
   * Where its own WAL begins: a root's base checkpoint, a copy's LSN (an online copy's backup end),
   * a replay's switch to its new timeline.
   */
  lsn: string;
  /** The timeline its WAL is written on. */
  tli: number;
  /** The branch whose folder writes to it (its live pg_wal holds what is not archived yet). */
  branchId: string;
  /** When it began (wall ms): no point before can be replayed from it. */
  since?: number;
  /** The folder of its base copy (a root's), `base` unless its base was rolled forward. */
  base?: string;
  /**
   * Where a replay from a rolled-forward base begins reading WAL (the base's restartpoint), before
   * `lsn`, the first point the base can be replayed to.
   */
  redo?: string;
  /**
   * Its branch's past goes on into the history it continues (a restore's kept state is the
   * restored branch's past), rather than beginning at its copy.
   */
  inherits?: boolean;
}

/** Where a branch's past begins along its chain (newest first): the LSN and wall time. */
export function historyStart(chain: HistoryLink[]): { lsn: string; since: number | undefined } {
  let i = 0;
  while (chain[i]?.origin.inherits && chain[i + 1]) i++;
  const origin = (chain[i] as HistoryLink).origin;
  return { lsn: origin.lsn, since: origin.since };
}

export interface HistoryLink {
  id: string;
  dir: string;
  origin: Origin;
}

/** The folder of a history's base copy (a root's). */
export function baseOf(link: HistoryLink): string {
  return path.join(link.dir, link.origin.base ?? "base");
}

/** The folder of a project's histories. */
export function historiesDir(projectDir: string): string {
  return path.join(projectDir, "history");
}

/** The history a branch folder names, made whole or not. */
export function namedHistory(branchDir: string): string | undefined {
  try {
    const id = fs.readFileSync(path.join(branchDir, HISTORY_FILE), "utf8").trim();
    return /^h-[0-9a-f]{12}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The history a branch folder writes to, if it keeps one. One a crash left half-made (no origin
 * yet) is none: the folder starts another.
 */
export function historyOf(branchDir: string): string | undefined {
  const id = namedHistory(branchDir);
  const projectDir = path.dirname(path.dirname(branchDir));
  return id && fs.existsSync(path.join(historiesDir(projectDir), id, ORIGIN_FILE)) ? id : undefined;
}

/**
 * Starts a new history for the folder `branchDir`: its folder and origin, and `base` made by
 * `makeBase` when it starts from a copy of its own. The folder names it first, so a collection
 * running meanwhile keeps it; if making it fails, the folder names none again and it goes.
 */
export async function startHistory(
  projectDir: string,
  branchDir: string,
  origin: Origin,
  makeBase?: (baseDir: string) => Promise<void>,
): Promise<string> {
  const id = `h-${randomBytes(6).toString("hex")}`;
  const dir = path.join(historiesDir(projectDir), id);
  const pointer = path.join(branchDir, HISTORY_FILE);
  // Folders above a server's let its user through (0711); the history is its own (0700).
  fs.mkdirSync(historiesDir(projectDir), { recursive: true, mode: 0o711 });
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.writeFileSync(pointer, id, { mode: 0o600 });
  try {
    if (makeBase) await makeBase(path.join(dir, "base"));
    // Timeline history files a recovery wrote (archiving was off for it): a replay along this
    // history needs them, whatever becomes of the folder.
    for (const name of readdir(path.join(branchDir, "pg_wal")))
      if (name.endsWith(".history"))
        fs.writeFileSync(
          path.join(dir, `${name}.gz`),
          gzipSync(fs.readFileSync(path.join(branchDir, "pg_wal", name))),
          { mode: 0o600 },
        );
    // Handed to the servers' user before it counts as made (its origin written whole, by rename).
    await handOver(dir);
    const origins = path.join(dir, `${ORIGIN_FILE}.tmp`);
    fs.writeFileSync(origins, JSON.stringify({ since: wallNow(), ...origin }), { mode: 0o600 });
    fs.renameSync(origins, path.join(dir, ORIGIN_FILE));
  } catch (err) {
    fs.rmSync(pointer, { force: true });
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return id;
}

/** A history and the ones it continues, newest first. */
export function chainOf(projectDir: string, id: string): HistoryLink[] {
  const chain: HistoryLink[] = [];
  for (let next: string | undefined = id; next !== undefined; ) {
    if (chain.some((link) => link.id === next) || chain.length > 10_000)
      throw new Error(`history ${id} loops back on itself`);
    const dir = path.join(historiesDir(projectDir), next);
    const origin = JSON.parse(fs.readFileSync(path.join(dir, ORIGIN_FILE), "utf8")) as Origin;
    chain.push({ id: next, dir, origin });
    next = origin.from;
  }
  const root = chain[chain.length - 1];
  if (!root || !fs.existsSync(path.join(baseOf(root), "PG_VERSION")))
    throw new Error(`history ${id} has no base copy to replay from`);
  return chain;
}

/** A path inside a single-quoted shell word, `%` doubled for Postgres (escaped). */
function quoted(p: string): string {
  return escaped(p.replaceAll("'", `'\\''`));
}

/**
 * Where there are no Unix tools (unixTools): node running dist/cli/wal-command.cjs in `mode` from
 * `from` to `to`, words of cmd.exe's double quotes (Windows paths hold none).
 */
function nodeCommand(mode: "archive" | "restore", from: string, to: string): string {
  const script = path.join(packageRoot(), "dist", "cli", "wal-command.cjs");
  return `"${escaped(process.execPath)}" "${escaped(script)}" ${mode} ${from} ${to}`;
}

/** A path in a command Postgres runs: `%` doubled (it replaces %f and %p). */
function escaped(p: string): string {
  return p.replaceAll("%", "%%");
}

/** The archive_command of a primary writing to the history in `dir`: each completed segment, gzipped, renamed into place once whole. */
export function archiveCommand(dir: string): string {
  if (!unixTools.use) return nodeCommand("archive", '"%p"', `"${escaped(dir)}${path.sep}%f.gz"`);
  const tmp = `'${quoted(dir)}/%f.gz.tmp'`;
  return `gzip -1 -c "%p" > ${tmp} && mv -f ${tmp} '${quoted(dir)}/%f.gz'`;
}

/**
 * The restore_command of a recovery reading the segments staged in `stage` (gzipped links, or
 * plain copies). A segment archived without its zeroed tail (trimSegment) is padded back to a
 * segment's size with zeros (`dd` truncating at the size: the same bytes the server archived).
 */
export function restoreCommand(stage: string): string {
  if (!unixTools.use) return nodeCommand("restore", `"${escaped(stage)}${path.sep}%f"`, '"%p"');
  const pad = `case %f in ${"?".repeat(24)}) dd if=/dev/null of="%p" bs=1 seek=${SEGMENT_BYTES} ;; esac`;
  return `{ gzip -dc '${quoted(stage)}/%f.gz' > "%p" && ${pad}; } 2>/dev/null || cp '${quoted(stage)}/%f' "%p" 2>/dev/null`;
}

const gunzip = promisify(zlib.gunzip);
const gzip = promisify(zlib.gzip);
const PAGE_BYTES = 8192;
const ZERO_PAGE = Buffer.alloc(PAGE_BYTES);
/** Archived segments up to this size are looked at: a switched segment is mostly zeros (16 MB of zeros gzip to 73 KB). */
const TRIMMED_UP_TO = 4 * 1024 * 1024;

/**
 * Rewrites an archived segment whose tail is zeros (one a segment switch ended: an online copy's,
 * a stop's) without them, gzipped: the restore pads it back (restoreCommand), so unpacking it
 * costs the bytes written rather than 16 MB of zeros (~70 ms of CPU a segment, and a replay
 * unpacks every segment since its base). Lossless. One trimmed already (its gzip trailer's size
 * is not a segment's), larger, or without such a tail is left as it is.
 */
export async function trimSegment(file: string): Promise<void> {
  const { size, atime, mtime } = await fs.promises.stat(file);
  if (size > TRIMMED_UP_TO || size < 18) return;
  const handle = await fs.promises.open(file, "r");
  const trailer = Buffer.alloc(4);
  try {
    await handle.read(trailer, 0, 4, size - 4);
  } finally {
    await handle.close();
  }
  if (trailer.readUInt32LE(0) !== Number(SEGMENT_BYTES)) return;
  const bytes = await gunzip(await fs.promises.readFile(file));
  let keep = bytes.length;
  while (keep > PAGE_BYTES && bytes.subarray(keep - PAGE_BYTES, keep).equals(ZERO_PAGE)) keep -= PAGE_BYTES;
  if (bytes.length !== Number(SEGMENT_BYTES) || keep === bytes.length) return;
  const work = `${file}.trim-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await fs.promises.writeFile(work, await gzip(bytes.subarray(0, keep), { level: 1 }), { mode: 0o600 });
    // Its time stays when it was archived: the retention window reads it (rollTarget).
    await fs.promises.utimes(work, atime, mtime);
    await handOver(work);
    await fs.promises.rename(work, file);
  } finally {
    await fs.promises.rm(work, { force: true });
  }
}

/** The archived segments in a history's folder (paths), for trimSegment. */
export function archivedIn(dir: string): string[] {
  return readdir(dir)
    .filter((file) => ARCHIVED_SEGMENT.test(file))
    .map((file) => path.join(dir, file));
}

/** The archived segments of a project's histories (paths). */
export function archivedSegments(projectDir: string): string[] {
  const root = historiesDir(projectDir);
  return readdir(root).flatMap((id) => archivedIn(path.join(root, id)));
}

/**
 * Lays out in `stage` the WAL a recovery along `chain` reads, each segment from the history that
 * wrote it: a history gives the segments of its timeline from its start up to where the next one
 * in the chain branched off (the newest, up to `end`), a newer history's copy of a segment
 * winning. Archived segments are hard-linked (they stay readable if their history goes meanwhile);
 * those not archived yet are copied from the live pg_wal of the branch still writing to that
 * history (`liveDir`). Timeline history files come from all. A segment missing from a history's
 * range is an error: a replay would otherwise stop short of the point without saying so.
 * Returns the ranges, oldest first.
 */
export async function stageWal(
  chain: HistoryLink[],
  end: bigint,
  liveDir: (link: HistoryLink) => string | undefined,
  stage: string,
): Promise<WalRange[]> {
  fs.mkdirSync(stage, { recursive: true, mode: 0o700 });
  const staged = new Set<string>();
  const ranges: { history: HistoryLink; start: bigint; stop: bigint; crossesTimeline: boolean }[] = [];
  const link = (from: string, name: string) => {
    try {
      fs.linkSync(from, path.join(stage, name));
    } catch {
      fs.copyFileSync(from, path.join(stage, name));
    }
  };
  for (const [i, history] of chain.entries()) {
    const { tli } = history.origin;
    const start = parseLsn(history.origin.redo ?? history.origin.lsn);
    const newer = chain[i - 1];
    const stop = newer ? parseLsn(newer.origin.lsn) : end;
    const first = segmentName(tli, start);
    // WAL that ends at a segment's first byte (a segment switch's) ends in the segment before.
    const last = segmentName(tli, stop > start ? stop - 1n : stop);
    const wanted = (name: string) =>
      staged.has(name)
        ? false
        : name.endsWith(".history") ||
          (SEGMENT.test(name) && name.slice(0, 8) === first.slice(0, 8) && name >= first && name <= last);
    for (const file of readdir(history.dir)) {
      if (!file.endsWith(".gz")) continue;
      const name = file.slice(0, -3);
      if (!wanted(name)) continue;
      link(path.join(history.dir, file), file);
      staged.add(name);
    }
    const live = liveDir(history);
    if (live) {
      const wal = path.join(live, "pg_wal");
      for (const name of readdir(wal)) {
        if (!wanted(name)) continue;
        try {
          await fs.promises.copyFile(path.join(wal, name), path.join(stage, name));
          staged.add(name);
        } catch {
          // Archived and removed meanwhile: the archive has it now.
          const archived = path.join(history.dir, `${name}.gz`);
          if (fs.existsSync(archived)) {
            link(archived, `${name}.gz`);
            staged.add(name);
          }
        }
      }
    }
    ranges.push({ history, start, stop, crossesTimeline: newer !== undefined && newer.origin.tli !== tli });
  }
  // Every segment of every range is there, from whichever history gave it; an older history's
  // last one may be another timeline's (a point-in-time branch's first segment holds it).
  for (const { history, start, stop, crossesTimeline } of ranges)
    for (
      let at = start - (start % SEGMENT_BYTES);
      at < (stop > start ? stop : start + 1n);
      at += SEGMENT_BYTES
    ) {
      if (crossesTimeline && at + SEGMENT_BYTES > stop) break;
      const name = segmentName(history.origin.tli, at);
      if (!staged.has(name))
        throw new Error(`the history of this branch is missing WAL segment ${name} (history ${history.id})`);
    }
  await handOver(stage);
  return ranges.map(({ history, start, stop }) => ({ tli: history.origin.tli, start, stop })).reverse();
}

/** Copies a history's base into `work` (data and all its WAL), for a recovery to start from. */
export async function copyBase(link: HistoryLink, work: string): Promise<void> {
  const base = baseOf(link);
  await copyData(base, work);
  await copyWal(base, work, segmentName(link.origin.tli, 0n));
}

/**
 * Removes the project's histories that no branch folder reaches any more (through the one it
 * writes to and those that continues). `live` are the history ids branch folders name, those
 * under way included.
 */
export function collectHistories(projectDir: string, live: Iterable<string>): void {
  const root = historiesDir(projectDir);
  const keep = new Set<string>();
  for (const id of live) {
    for (let next: string | undefined = id; next !== undefined && !keep.has(next); ) {
      keep.add(next);
      const file = path.join(root, next, ORIGIN_FILE);
      // One still being made has no origin yet (it continues none so far).
      if (!fs.existsSync(file)) break;
      try {
        next = (JSON.parse(fs.readFileSync(file, "utf8")) as Origin).from;
      } catch {
        return; // unreadable: nothing is removed rather than a history still reached
      }
    }
  }
  for (const id of readdir(root))
    if (!keep.has(id)) fs.rmSync(path.join(root, id), { recursive: true, force: true });
}

/** A segment's number along the WAL (its LSN divided by the segment size), from its file name. */
function segmentNumber(name: string): bigint {
  return BigInt(`0x${name.slice(8, 16)}`) * 256n + BigInt(`0x${name.slice(16, 24)}`);
}

/** Where a history's own WAL (or a rolled-forward base's replay) begins. */
function ownStart(link: HistoryLink): bigint {
  return parseLsn(link.origin.redo ?? link.origin.lsn);
}

/** A history's archived segments of its own timeline, by number: when each was archived (wall ms) and its size. */
function archivedOf(link: HistoryLink): Map<bigint, { at: number; bytes: number }> {
  const archived = new Map<bigint, { at: number; bytes: number }>();
  for (const file of readdir(link.dir)) {
    const name = file.slice(0, -3);
    if (
      !file.endsWith(".gz") ||
      !SEGMENT.test(name) ||
      Number.parseInt(name.slice(0, 8), 16) !== link.origin.tli
    )
      continue;
    const stat = fs.statSync(path.join(link.dir, file));
    archived.set(segmentNumber(name), { at: stat.mtimeMs, bytes: stat.size });
  }
  return archived;
}

/** How far a history's base may be rolled forward, and the time its history then begins. */
export interface Roll {
  /** A segment boundary: the replay stops before the first record at or after it. */
  target: bigint;
  /** Every commit before `target` is older (wall ms). */
  since: number;
  /** The bytes of the history's archived segments before `target` (at most what could go). */
  bytes: number;
}

/**
 * How far `link`'s base may move forward: past the run of its own archived segments, from its
 * first, that were all archived before `before` (wall ms: they hold only WAL written before the
 * retention window), whose next segment is archived too or still in the live pg_wal of its branch's
 * folder, `liveDir` (the replay reads the first record after the target there: a branch stopped
 * once has only that stop's segment archived), and never past `limit` (where a history continuing
 * it begins). Undefined when no segment qualifies.
 */
export function rollTarget(
  link: HistoryLink,
  before: number,
  limit: bigint | undefined,
  liveDir: string | undefined,
): Roll | undefined {
  const { tli } = link.origin;
  const archived = archivedOf(link);
  const live = new Set<bigint>();
  if (liveDir)
    for (const name of readdir(path.join(liveDir, "pg_wal")))
      if (SEGMENT.test(name) && Number.parseInt(name.slice(0, 8), 16) === tli) live.add(segmentNumber(name));
  const first = ownStart(link) / SEGMENT_BYTES;
  // A copy's first segment may have been completed by its source (an online copy's, which ends
  // with the source's switch to a new segment): its own WAL then begins in the next one.
  let next = archived.has(first) ? first : first + 1n;
  let since = link.origin.since ?? 0;
  let bytes = 0;
  let moved = false;
  for (;;) {
    const segment = archived.get(next);
    if (segment === undefined || segment.at >= before) break;
    if (!archived.has(next + 1n) && !live.has(next + 1n)) break;
    if (limit !== undefined && (next + 1n) * SEGMENT_BYTES > limit) break;
    since = Math.max(since, segment.at);
    bytes += segment.bytes;
    next++;
    moved = true;
  }
  const target = next * SEGMENT_BYTES;
  return moved && target > parseLsn(link.origin.lsn) ? { target, since, bytes } : undefined;
}

/**
 * The first LSN of `chain`'s WAL (newest history first, as chainOf gives it) not written wholly
 * before `before` (wall ms): the start of the first segment, from the root's start on, that was
 * archived at or after `before` or is not archived yet. A point before it is older than the
 * project keeps history for, though a history may still hold its WAL (its base is rolled forward
 * only when that frees space).
 */
export function keptFrom(chain: HistoryLink[], before: number): bigint {
  for (let i = chain.length - 1; i >= 0; i--) {
    const link = chain[i] as HistoryLink;
    const archived = archivedOf(link);
    const start = ownStart(link);
    // Up to where the next history in the chain continues this one.
    const stop = i > 0 ? parseLsn((chain[i - 1] as HistoryLink).origin.lsn) : undefined;
    for (
      let segment = start / SEGMENT_BYTES;
      stop === undefined || segment * SEGMENT_BYTES < stop;
      segment++
    ) {
      const at = archived.get(segment)?.at;
      if (at === undefined || at >= before) {
        return maxLsn(segment * SEGMENT_BYTES, start);
      }
    }
  }
  return 0n;
}

/** A history folder's origin; undefined while it is being made (or unreadable). */
function readOrigin(dir: string): Origin | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, ORIGIN_FILE), "utf8")) as Origin;
  } catch {
    return undefined;
  }
}

/** The project's histories whose origin is written. */
function projectHistories(projectDir: string): HistoryLink[] {
  const links: HistoryLink[] = [];
  for (const id of readdir(historiesDir(projectDir))) {
    const dir = path.join(historiesDir(projectDir), id);
    const origin = readOrigin(dir);
    if (origin) links.push({ id, dir, origin });
  }
  return links;
}

/** The base folders of a project's histories (roots'). */
export function projectBases(projectDir: string): string[] {
  return projectHistories(projectDir)
    .filter((link) => link.origin.from === undefined)
    .map(baseOf);
}

/**
 * Where the histories that continue `id` begin (the lowest: a base of `id` may not move past it).
 * One still being made is not seen: the copy making it holds the bases (see the driver's holds).
 */
export function continuedFrom(projectDir: string, id: string): bigint | undefined {
  let lowest: bigint | undefined;
  for (const { origin } of projectHistories(projectDir)) {
    if (origin.from !== id) continue;
    const lsn = parseLsn(origin.lsn);
    if (lowest === undefined || lsn < lowest) lowest = lsn;
  }
  return lowest;
}

/**
 * Makes the data folder `work` (a replay of `link`'s chain stopped at `roll.target`, shut down at
 * its restartpoint `redo`) the history's base: it becomes a root, beginning at the target, and its
 * segments before the restartpoint's go. Returns the bytes removed. The origin names the new base
 * before the old one goes (a crash between leaves what tidyHistory removes at the next start).
 */
export function adoptBase(link: HistoryLink, work: string, roll: Roll, redo: bigint): number {
  const name = `base-${randomBytes(4).toString("hex")}`;
  fs.renameSync(work, path.join(link.dir, name));
  const origin: Origin = {
    lsn: lsnText(roll.target),
    redo: lsnText(redo),
    tli: link.origin.tli,
    branchId: link.origin.branchId,
    since: roll.since,
    base: name,
  };
  const tmp = path.join(link.dir, `${ORIGIN_FILE}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(origin), { mode: 0o600 });
  fs.renameSync(tmp, path.join(link.dir, ORIGIN_FILE));
  return tidyHistory(link.dir);
}

/** A history's archived segments (and backup history files) before `firstSegment`. */
function segmentsBefore(dir: string, firstSegment: bigint): string[] {
  return readdir(dir)
    .filter(
      (file) => SEGMENT.test(file.slice(0, 24)) && file.endsWith(".gz") && segmentNumber(file) < firstSegment,
    )
    .map((file) => path.join(dir, file));
}

/** The bytes of a history's archived segments before `firstSegment` (what a base replaying from there frees). */
export function segmentBytesBefore(dir: string, firstSegment: bigint): number {
  return segmentsBefore(dir, firstSegment).reduce((sum, file) => sum + fs.statSync(file).size, 0);
}

/**
 * The WAL each branch's past holds (bytes of archived segments, gzipped as stored; not the backup
 * history files beside them): the history its folder writes to, and those its past goes on into
 * (a restore's kept state inherits the restored branch's) that no other branch's folder writes to.
 */
export function historyBytesByBranch(projectDir: string): Map<string, number> {
  const links = new Map(projectHistories(projectDir).map((link) => [link.id, link]));
  const writers = new Map<string, string>(); // history -> the branch whose folder writes to it
  for (const branchId of readdir(path.join(projectDir, "branches"))) {
    if (branchId.startsWith(".")) continue; // a copy at a point, being made
    const id = namedHistory(path.join(projectDir, "branches", branchId));
    if (id) writers.set(id, branchId);
  }
  const bytes = new Map<string, number>();
  for (const [id, branchId] of writers) {
    let held = 0;
    const seen = new Set<string>();
    for (let link = links.get(id); link && !seen.has(link.id); ) {
      seen.add(link.id);
      held += archivedBytes(link.dir);
      const next = link.origin.inherits && link.origin.from ? links.get(link.origin.from) : undefined;
      link = next && !writers.has(next.id) ? next : undefined;
    }
    bytes.set(branchId, held);
  }
  return bytes;
}

/** The bytes of a history's archived segments. */
function archivedBytes(dir: string): number {
  let held = 0;
  for (const file of readdir(dir))
    try {
      if (ARCHIVED_SEGMENT.test(file)) held += fs.statSync(path.join(dir, file)).size;
    } catch {
      // removed meanwhile (a pruning)
    }
  return held;
}

/**
 * Removes from a history's folder what its origin no longer needs: base folders it does not name,
 * a trimming's file a stop cut short and, for a base rolled forward, the WAL segments before the
 * one its replays begin in. Returns
 * the bytes of segments removed.
 */
export function tidyHistory(dir: string): number {
  const origin = readOrigin(dir);
  if (!origin) return 0; // still being made, or unreadable: left as it is
  const base = origin.base ?? "base";
  for (const file of readdir(dir))
    if ((/^base(-[0-9a-f]{8})?$/.test(file) && file !== base) || /\.gz\.trim-\d+-[0-9a-f]{8}$/.test(file))
      fs.rmSync(path.join(dir, file), { recursive: true, force: true });
  if (origin.redo === undefined) return 0;
  const old = segmentsBefore(dir, parseLsn(origin.redo) / SEGMENT_BYTES);
  const removed = old.reduce((sum, file) => sum + fs.statSync(file).size, 0);
  for (const file of old) fs.rmSync(file, { force: true });
  return removed;
}
