import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { SEGMENT_BYTES, segmentName } from "./copy.js";

/**
 * Reads the transactions' ends in a staged history's WAL, to find where a point in time is. A
 * recovery to a time stops before the first commit after it, having replayed what came before
 * that commit: work no transaction holds back, such as a `DROP DATABASE` under way (which marks
 * the database invalid and removes its files before it commits). Neon's branch at a time is the
 * state at the end of the last commit by then; this finds that LSN, and the recovery stops there.
 *
 * The WAL layout (Postgres' xlog_internal.h and xlogrecord.h): 8 KiB pages, each opening with a
 * header (24 bytes, 40 on a segment's first page) whose xlp_pageaddr is the page's own LSN (a
 * recycled segment's stale pages name older ones); records MAXALIGNed (8), continued across pages
 * after their headers, each a 24-byte XLogRecord (xl_tot_len, xl_xid, xl_prev, xl_info, xl_rmid)
 * then its block and data headers, the main data last.
 */

/** A stretch of the WAL a recovery reads on one timeline, [start, stop). */
export interface WalRange {
  tli: number;
  start: bigint;
  stop: bigint;
}

const PAGE = 8192n;
const SHORT_HEADER = 24n;
const LONG_HEADER = 40n;
const XLP_FIRST_IS_CONTRECORD = 0x0001;
const XLP_LONG_HEADER = 0x0002;
const RECORD_HEADER = 24;
const RM_XLOG_ID = 0;
/** XLOG_SWITCH: the rest of its segment is unused, the next record begins the next segment. */
const XLOG_SWITCH = 0x40;
const RM_XACT_ID = 1;
const XLOG_XACT_OPMASK = 0x70;
/** Commit, abort, commit prepared, abort prepared: the records a recovery to a time stops at. */
const XACT_ENDS = new Set([0x00, 0x20, 0x30, 0x40]);
const XLR_BLOCK_ID_DATA_SHORT = 255;
const XLR_BLOCK_ID_DATA_LONG = 254;
const XLR_BLOCK_ID_ORIGIN = 253;
const XLR_BLOCK_ID_TOPLEVEL_XID = 252;
/** The longest record Postgres writes (XLogRecordMaxSize). */
const MAX_RECORD = 1020 * 1024 * 1024;
/** Microseconds from the Unix epoch to Postgres' (2000-01-01). */
const PG_EPOCH_US = 946_684_800_000_000n;

const align = (lsn: bigint) => (lsn + 7n) & ~7n;

const gunzip = promisify(zlib.gunzip);

class StagedWal {
  /** Segments read (by number), from the one the scan is in on. */
  private readonly loaded = new Map<bigint, Buffer | undefined>();

  constructor(
    private readonly stage: string,
    private readonly ranges: WalRange[],
  ) {}

  /**
   * Reads the segments holding [from, to) that are not read yet, and forgets those before.
   */
  async load(from: bigint, to: bigint): Promise<void> {
    const first = from / SEGMENT_BYTES;
    for (const segment of this.loaded.keys()) if (segment < first) this.loaded.delete(segment);
    for (let segment = first; segment <= (to - 1n) / SEGMENT_BYTES; segment++) {
      if (this.loaded.has(segment)) continue;
      const lsn = segment * SEGMENT_BYTES;
      // As Postgres reads it: the newest timeline's copy of the segment (a timeline that begins
      // in it holds the older one's bytes up to its start, then its own).
      const newest = this.ranges.findLastIndex((r) => lsn + SEGMENT_BYTES > r.start && lsn < r.stop);
      let bytes: Buffer | undefined;
      for (const { tli } of (newest < 0 ? this.ranges : this.ranges.slice(0, newest + 1)).toReversed()) {
        const name = path.join(this.stage, segmentName(tli, lsn));
        bytes = await fs.promises
          .readFile(`${name}.gz`)
          .then((zipped) => gunzip(zipped))
          // Archived without its zeroed tail (trimSegment): the zeros put back.
          .then((whole) =>
            whole.length > 0 && whole.length < Number(SEGMENT_BYTES)
              ? Buffer.concat([whole, Buffer.alloc(Number(SEGMENT_BYTES) - whole.length)])
              : whole,
          )
          .catch(() => fs.promises.readFile(name))
          .catch(() => undefined);
        if (bytes?.length === Number(SEGMENT_BYTES)) break;
        bytes = undefined;
      }
      this.loaded.set(segment, bytes);
    }
  }

  private segment(lsn: bigint): Buffer | undefined {
    return this.loaded.get(lsn / SEGMENT_BYTES);
  }

  /** The size of the header of the page holding `lsn`, or undefined when that page is not this WAL's (its end). */
  headerAt(lsn: bigint): bigint | undefined {
    const bytes = this.segment(lsn);
    if (!bytes) return undefined;
    const page = lsn - (lsn % PAGE);
    const offset = Number(page % SEGMENT_BYTES);
    if (bytes.readBigUInt64LE(offset + 8) !== page) return undefined;
    return bytes.readUInt16LE(offset + 2) & XLP_LONG_HEADER ? LONG_HEADER : SHORT_HEADER;
  }

  /**
   * Where the first record beginning on the page holding `lsn` begins: past the page's header and
   * the rest of a record continued from the page before (xlp_rem_len, when XLP_FIRST_IS_CONTRECORD);
   * undefined when that rest fills the page, or the page is not this WAL's.
   */
  firstRecordOn(lsn: bigint): bigint | undefined {
    const header = this.headerAt(lsn);
    const bytes = this.segment(lsn);
    if (header === undefined || !bytes) return undefined;
    const page = lsn - (lsn % PAGE);
    const offset = Number(page % SEGMENT_BYTES);
    const continued = bytes.readUInt16LE(offset + 2) & XLP_FIRST_IS_CONTRECORD;
    const rest = continued ? BigInt(bytes.readUInt32LE(offset + 16)) : 0n;
    const first = align(page + header + rest);
    return first < page + PAGE ? first : undefined;
  }

  /**
   * The record beginning at `lsn` (past a page header `lsn` may point at): where it begins, its
   * bytes, where they end and where the next record begins (a segment switch's: the next segment);
   * undefined where no record can be read (the WAL's end, a page not this WAL's).
   */
  async recordAt(
    lsn: bigint,
  ): Promise<{ start: bigint; bytes: Buffer; end: bigint; next: bigint } | undefined> {
    await this.load(lsn, lsn + 8n);
    const header = this.headerAt(lsn);
    if (header === undefined) return undefined;
    const page = lsn - (lsn % PAGE);
    const start = lsn - page < header ? page + header : lsn;
    const length = this.read(start, 4)?.bytes.readUInt32LE(0);
    if (length === undefined || length < RECORD_HEADER || length > MAX_RECORD) return undefined;
    // Its bytes and the page headers between them.
    await this.load(
      start,
      start + BigInt(length) + (BigInt(length) / (PAGE - LONG_HEADER) + 2n) * LONG_HEADER,
    );
    const record = this.read(start, length);
    if (!record) return undefined;
    const { bytes, end } = record;
    const next =
      bytes[17] === RM_XLOG_ID && ((bytes[16] as number) & 0xf0) === XLOG_SWITCH
        ? end + ((SEGMENT_BYTES - (end % SEGMENT_BYTES)) % SEGMENT_BYTES)
        : align(end);
    return { start, bytes, end, next };
  }

  /** `length` bytes of records from `lsn` on, across page headers; with where they end. */
  read(lsn: bigint, length: number): { bytes: Buffer; end: bigint } | undefined {
    const out: Buffer[] = [];
    let left = BigInt(length);
    let at = lsn;
    while (left > 0n) {
      const header = this.headerAt(at);
      const bytes = this.segment(at);
      if (header === undefined || !bytes) return undefined;
      const page = at - (at % PAGE);
      if (at - page < header) at = page + header;
      const take = left < page + PAGE - at ? left : page + PAGE - at;
      const offset = Number(at % SEGMENT_BYTES);
      out.push(bytes.subarray(offset, offset + Number(take)));
      at += take;
      left -= take;
    }
    return { bytes: out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out), end: at };
  }
}

/** The main data of a record without block references (a transaction's end has none), if it is one. */
function mainData(record: Buffer): Buffer | undefined {
  let at = RECORD_HEADER;
  while (at < record.length) {
    const id = record[at] as number;
    if (id === XLR_BLOCK_ID_DATA_SHORT) return record.subarray(at + 2, at + 2 + (record[at + 1] as number));
    if (id === XLR_BLOCK_ID_DATA_LONG) return record.subarray(at + 5, at + 5 + record.readUInt32LE(at + 1));
    if (id === XLR_BLOCK_ID_ORIGIN) at += 3;
    else if (id === XLR_BLOCK_ID_TOPLEVEL_XID) at += 5;
    else return undefined;
  }
  return undefined;
}

/**
 * The transactions' ends (commit or abort) in the staged WAL read along `ranges` (oldest first) from
 * the first one's start up to `end`, in WAL order: the LSN right after each, and its time (µs since
 * Postgres' epoch). Stops early where the WAL stops being readable or linked (its true end).
 */
async function* transactionEnds(
  stage: string,
  ranges: WalRange[],
  end: bigint,
): AsyncGenerator<{ next: bigint; time: bigint }> {
  const first = ranges[0];
  if (!first) return;
  const wal = new StagedWal(stage, ranges);
  let previous: bigint | undefined;
  let at = first.start;
  for (let records = 1; at < end; records++) {
    // A long history is read a segment at a time, the process answering others meanwhile.
    if (records % 4096 === 0) await new Promise((resolve) => setImmediate(resolve));
    const record = await wal.recordAt(at);
    if (!record) return;
    const { bytes } = record;
    // A record not linked to the one before is past the WAL's end (a recycled segment's old bytes).
    if (previous !== undefined && bytes.readBigUInt64LE(8) !== previous) return;
    if (bytes[17] === RM_XACT_ID && XACT_ENDS.has((bytes[16] as number) & XLOG_XACT_OPMASK)) {
      const data = mainData(bytes);
      if (data && data.length >= 8) yield { next: record.next, time: data.readBigInt64LE(0) };
    }
    previous = record.start;
    at = record.next;
  }
}

/**
 * Where the state at `wallMs` ends in the staged WAL read along `ranges` (oldest first) from the
 * first one's start up to `end`: the LSN right after the last transaction's end (commit or abort)
 * at or before it, when a later one follows; undefined when none does (the state then is the
 * WAL's end) or none came before (the recovery's own consistent start is the earliest state).
 */
export async function lastTransactionEnd(
  stage: string,
  ranges: WalRange[],
  end: bigint,
  wallMs: number,
): Promise<bigint | undefined> {
  const limit = BigInt(Math.round(wallMs * 1000)) - PG_EPOCH_US;
  let found: bigint | undefined;
  for await (const { next, time } of transactionEnds(stage, ranges, end)) {
    if (time > limit) return found;
    found = next;
  }
  return undefined;
}

/**
 * The latest time (wall ms, to the microsecond) a transaction ended at in the WAL of folder `dir`'s
 * `pg_wal` on timeline `tli` from `start` up to `end` (an online copy's, from its backup's start to
 * its end); undefined when none ended there. The latest, not the last written: a commit is
 * stamped before its record is written, so two at once may be written in the other order.
 */
export async function lastTransactionTime(
  dir: string,
  tli: number,
  start: bigint,
  end: bigint,
): Promise<number | undefined> {
  let latest: bigint | undefined;
  for await (const { time } of transactionEnds(path.join(dir, "pg_wal"), [{ tli, start, stop: end }], end))
    if (latest === undefined || time > latest) latest = time;
  return latest === undefined ? undefined : Number(latest + PG_EPOCH_US) / 1000;
}

/**
 * Where the record holding `lsn` inside it begins (it began before `lsn` and ends after it), in the
 * staged WAL read along `ranges`; undefined when `lsn` is at a record's start, between records, or
 * past what the WAL holds. A recovery to an LSN stops before the first record beginning at or after
 * it, so it would replay a record that ends after it; the state at an LSN holds the records that end
 * by it (as Neon's), so the replay stops at that record's start instead. Read from the page holding
 * `lsn` on (a record begun on an earlier page found by the next record's link back to it).
 */
export async function recordAround(
  stage: string,
  ranges: WalRange[],
  lsn: bigint,
): Promise<bigint | undefined> {
  const wal = new StagedWal(stage, ranges);
  // The first record beginning on the page of `lsn`, or on a later one when a record fills pages.
  let page = lsn - (lsn % PAGE);
  let at: bigint | undefined;
  for (let pages = 0; at === undefined && pages < MAX_RECORD / Number(PAGE) + 2; pages++, page += PAGE) {
    await wal.load(page, page + PAGE);
    if (wal.headerAt(page) === undefined) return undefined;
    at = wal.firstRecordOn(page);
  }
  if (at === undefined) return undefined;
  if (at > lsn) {
    // `lsn` is in a record continued onto its page: the one before the first beginning there.
    const previous = (await wal.recordAt(at))?.bytes.readBigUInt64LE(8);
    return previous !== undefined && previous < lsn ? previous : undefined;
  }
  for (;;) {
    const record = await wal.recordAt(at);
    if (!record || record.start >= lsn) return undefined;
    if (record.end > lsn) return record.start;
    at = record.next;
  }
}
