import fs from "node:fs";
import path from "node:path";
import { run, unixTools } from "./child-process.js";

/**
 * Copies of Postgres data folders (branches, read replicas) that take only the WAL the copy
 * needs: a folder's pg_wal can hold far more than its data (a bulk load leaves hundreds of MB of
 * segments until the next checkpoints recycle them), and copying it would double a branch's cost.
 */

/** The file in a branch's folder naming the history it writes to (history.ts); a copy starts its own. */
export const HISTORY_FILE = "neon_history";

/** The WAL segment size of every cluster the emulator makes (initdb's default). */
export const SEGMENT_BYTES = 16n * 1024n * 1024n;
const SEGMENT = /^[0-9A-F]{24}$/;

/** An LSN as Postgres prints it (X/X). */
export function lsnText(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** The later of two LSNs. */
export function maxLsn(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** The earlier of two LSNs. */
export function minLsn(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split("/");
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/** The name of the WAL segment holding `lsn` on timeline `tli`. */
export function segmentName(tli: number, lsn: bigint): string {
  const segment = lsn / SEGMENT_BYTES;
  const hex = (n: bigint | number) => n.toString(16).toUpperCase().padStart(8, "0");
  return `${hex(tli)}${hex(segment / 256n)}${hex(segment % 256n)}`;
}

/**
 * What pg_control says of a folder: the latest checkpoint (a recovery's latest restartpoint),
 * its redo point and timeline, and whether the server shut down cleanly or mid-recovery.
 * (ControlFileData's layout, unchanged since Postgres 10: state at 16, checkPoint at 32,
 * checkPointCopy.redo at 40, its ThisTimeLineID at 48.)
 */
export function controlInfo(dir: string): {
  checkpoint: bigint;
  redo: bigint;
  tli: number;
  clean: boolean;
  stoppedInRecovery: boolean;
} {
  const control = fs.readFileSync(path.join(dir, "global", "pg_control"));
  const DB_SHUTDOWNED = 1;
  const DB_SHUTDOWNED_IN_RECOVERY = 2;
  const state = control.readUInt32LE(16);
  return {
    checkpoint: control.readBigUInt64LE(32),
    redo: control.readBigUInt64LE(40),
    tli: control.readUInt32LE(48),
    clean: state === DB_SHUTDOWNED,
    stoppedInRecovery: state === DB_SHUTDOWNED_IN_RECOVERY,
  };
}

/**
 * Whether a server folder holds a logical replication slot: a slot's `state` file is its on-disk
 * header (magic, checksum, version, length: 16 bytes), then its name (64) and its database's OID,
 * set for a logical slot alone.
 */
export function holdsLogicalSlot(dir: string): boolean {
  const slots = path.join(dir, "pg_replslot");
  const names = fs.existsSync(slots) ? fs.readdirSync(slots) : [];
  return names.some((name) => {
    try {
      const state = fs.readFileSync(path.join(slots, name, "state"));
      return state.length >= 84 && state.readUInt32LE(80) !== 0;
    } catch {
      return false;
    }
  });
}

/**
 * The folder's files without pg_wal's segments (`cp -a`, owners and modes kept; run files left
 * out). A cluster is ~1,300 files, most of them small, and making a file costs more than copying
 * its bytes: each database's folder goes to its own `cp` at once, beside one for the rest.
 * Replication slots stay behind (pg_replslot is made empty), as in a base backup: a child branch or
 * a replica starts with none, and a subscriber of the parent's slot does not find it twice.
 */
export async function copyData(from: string, to: string): Promise<void> {
  const skip = new Set(["base", "pg_wal", "pg_replslot", "postmaster.pid", "postmaster.opts", HISTORY_FILE]);
  const entries = fs
    .readdirSync(from)
    .filter((name) => !skip.has(name))
    .map((name) => path.join(from, name));
  const base = path.join(from, "base");
  const databases = fs.readdirSync(base).map((name) => path.join(base, name));
  const stat = fs.statSync(from);
  const made = [
    to,
    path.join(to, "base"),
    path.join(to, "pg_wal"),
    path.join(to, "pg_wal", "archive_status"),
    path.join(to, "pg_replslot"),
  ];
  for (const dir of made) {
    fs.mkdirSync(dir, { mode: dir === to ? stat.mode & 0o777 : 0o700 });
    fs.chownSync(dir, stat.uid, stat.gid);
  }
  const copies = databases.map((db) => copyInto([db], made[1] as string));
  if (entries.length) copies.push(copyInto(entries, to));
  // Every copy ends before this does, failed or not: the caller removes a failed copy's folder.
  const failed = (await Promise.allSettled(copies)).find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

/**
 * Copies each of `sources` (files or folders) into the folder `dir`, with owners and modes: `cp -a`
 * (2–4× faster here than node's copies), or node's own (copyTree) where there is no `cp` (Windows).
 */
async function copyInto(sources: string[], dir: string): Promise<void> {
  if (unixTools.use) await run("cp", ["-a", ...sources, `${dir}/`]);
  else
    await Promise.all(
      sources.map((source) => copyTree(source, path.join(dir, path.basename(source)), false)),
    );
}

/**
 * Makes the folder copies go into (a project's branches, snapshots or a branch's replicas) and any
 * missing folder above it. On Linux each folder made is marked the top of a hierarchy (`chattr +T`),
 * so ext4 puts every folder later made in it in a block group of its own, not beside the folder
 * just removed. That matters on ext4 without a journal: for a minute after files are deleted (five
 * while their inode table block is unwritten), every file made in their block group first skips,
 * one by one, each inode they freed; a branch copy made just after a branch was deleted took
 * 0.5–0.75 s instead of 0.11–0.24 s. Where the mark cannot be set (other file systems, macOS), the
 * folders are made all the same.
 */
export async function makeCopiesFolder(dir: string): Promise<void> {
  const first = fs.mkdirSync(dir, { recursive: true, mode: 0o711 });
  if (first === undefined) return;
  const made: string[] = [];
  for (let d = dir; d.length >= first.length; d = path.dirname(d)) made.push(d);
  await markTops(made);
}

/** `chattr +T` on folders (Linux; a hint to the allocator, so any failure is ignored). */
export async function markTops(dirs: string[]): Promise<void> {
  if (process.platform !== "linux") return;
  for (let i = 0; i < dirs.length; i += 500)
    await run("chattr", ["+T", ...dirs.slice(i, i + 500)]).catch(() => undefined);
}

/** The WAL segments from `first` to `last` (names; `last` omitted: every later one) and timeline history files. */
export async function copyWal(from: string, to: string, first: string, last?: string): Promise<void> {
  const wal = path.join(from, "pg_wal");
  const files = fs
    .readdirSync(wal)
    .filter((name) =>
      SEGMENT.test(name)
        ? name.slice(0, 8) === first.slice(0, 8) && name >= first && (last === undefined || name <= last)
        : name.endsWith(".history"),
    )
    .map((name) => path.join(wal, name));
  if (files.length) await copyInto(files, path.join(to, "pg_wal"));
}

/**
 * A copy of a folder no server runs on: its data and the WAL from its last checkpoint's redo
 * point (after a clean shutdown, that one segment; otherwise every later segment, for recovery).
 */
export async function copyStopped(from: string, to: string): Promise<void> {
  const control = controlInfo(from);
  await copyData(from, to);
  const first = segmentName(control.tli, control.redo);
  // A checkpoint record is small; one that began near a segment's end may end in the next.
  const last = control.clean ? segmentName(control.tli, control.checkpoint + 1024n) : undefined;
  await copyWal(from, to, first, last);
}

/**
 * A copy of a folder nothing writes to any more (a template) whose files are hard links of the
 * original's: folders made again with their modes and owners, files shared. Only for folders never
 * written in place: a write through either name would change both.
 */
export async function linkTree(from: string, to: string): Promise<void> {
  await copyTree(from, to, true);
}

/**
 * `from` (a file or a folder) at `to`: folders made again, files hard-linked (`link`; copied where
 * links cannot be made, e.g. on another file system) or copied, each with its owner and mode. A
 * server's run files (postmaster.pid, .opts) are left out.
 */
async function copyTree(from: string, to: string, link: boolean): Promise<void> {
  const stat = await fs.promises.stat(from);
  if (stat.isDirectory()) {
    await fs.promises.mkdir(to, { mode: stat.mode & 0o777 });
    for (const name of await fs.promises.readdir(from))
      if (name !== "postmaster.pid" && name !== "postmaster.opts")
        await copyTree(path.join(from, name), path.join(to, name), link);
  } else if (stat.isFile()) {
    const linked = link && (await hardLink(from, to));
    if (linked) return; // the same file: its owner and mode already
    await fs.promises.copyFile(from, to, fs.constants.COPYFILE_EXCL);
  } else return;
  await fs.promises.chown(to, stat.uid, stat.gid);
  await fs.promises.chmod(to, stat.mode & 0o777);
}

/** A hard link of `from` at `to`; false where none can be made. */
function hardLink(from: string, to: string): Promise<boolean> {
  return fs.promises.link(from, to).then(
    () => true,
    () => false,
  );
}

/**
 * Replaces each file under `dir` whose bytes equal those of the file at the same path under one of
 * `likes` with a hard link to that file, so the folders share what is the same in them (a base
 * rolled forward and the other bases of its project: a database no write touched, a table no
 * branch changed since one was copied from the other, the template's files). All are data folders
 * nothing writes to once made. Returns the bytes of the files left as copies of their own.
 */
export async function shareUnchanged(dir: string, likes: string[]): Promise<number> {
  let kept = 0;
  const walk = async (relative: string): Promise<void> => {
    for (const entry of await fs.promises.readdir(path.join(dir, relative), { withFileTypes: true })) {
      const name = path.join(relative, entry.name);
      if (entry.isDirectory()) {
        await walk(name);
        continue;
      }
      if (!entry.isFile()) continue;
      const mine = path.join(dir, name);
      const { size } = await fs.promises.stat(mine);
      if (
        !(await linkToSame(
          mine,
          size,
          likes.map((like) => path.join(like, name)),
        ))
      )
        kept += size;
    }
  };
  await walk("");
  return kept;
}

/** Replaces `file` with a hard link to the first of `candidates` holding the same bytes; whether it did. */
async function linkToSame(file: string, size: number, candidates: string[]): Promise<boolean> {
  for (const candidate of candidates) {
    if (!(await sameBytes(file, candidate, size))) continue;
    const link = `${file}.link`;
    try {
      await fs.promises.link(candidate, link);
      await fs.promises.rename(link, file);
      return true;
    } catch {
      await fs.promises.rm(link, { force: true }); // no links here (another file system): the copy stays
      return false;
    }
  }
  return false;
}

/** Whether the file `b` holds the `size` bytes of the file `a`. */
async function sameBytes(a: string, b: string, size: number): Promise<boolean> {
  const other = await fs.promises.stat(b).catch(() => undefined);
  if (!other?.isFile() || other.size !== size) return false;
  const [one, two] = await Promise.all([fs.promises.open(a), fs.promises.open(b)]);
  try {
    const x = Buffer.alloc(1 << 20);
    const y = Buffer.alloc(1 << 20);
    for (let at = 0; at < size; ) {
      const [read, other] = await Promise.all([one.read(x, 0, x.length, at), two.read(y, 0, y.length, at)]);
      const n = read.bytesRead;
      if (n === 0 || n !== other.bytesRead || !x.subarray(0, n).equals(y.subarray(0, n))) return false;
      at += n;
    }
    return true;
  } finally {
    await Promise.all([one.close(), two.close()]);
  }
}
