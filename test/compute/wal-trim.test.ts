import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { unixTools } from "../../src/compute/postgres/child-process.js";
import { restoreCommand, trimSegment } from "../../src/compute/postgres/history.js";
import { tempDir } from "../helpers/server.js";

/**
 * Archived WAL segments a segment switch ended (each online copy, each stop) are mostly zeros:
 * trimSegment stores them without that tail, and every restore puts the same 16 MB back.
 */
const SEGMENT = 16 * 1024 * 1024;
const NAME = "000000010000000000000003";

/** A segment switched after `written` bytes of WAL (the rest zeros, as Postgres leaves it). */
function switchedSegment(written: number): Buffer {
  const bytes = Buffer.alloc(SEGMENT);
  bytes.set(Buffer.from(Array.from({ length: written }, (_, i) => (i * 7919) % 251)), 0);
  return bytes;
}

/** Runs a restore_command as Postgres does (%f, %p substituted, in the shell), or node's on Windows. */
function restore(stage: string, name: string, target: string): void {
  const command = restoreCommand(stage).replaceAll("%f", name).replaceAll("%p", target).replaceAll("%%", "%");
  execFileSync(unixTools.use ? "/bin/sh" : "cmd.exe", unixTools.use ? ["-c", command] : ["/c", command]);
}

const isize = (file: string) => {
  const bytes = fs.readFileSync(file);
  return bytes.readUInt32LE(bytes.length - 4);
};

describe("archived segments without their zeroed tail", () => {
  it("are trimmed once, and a restore gives back the segment byte for byte", async () => {
    const dir = tempDir();
    const original = switchedSegment(100_000);
    const file = path.join(dir, `${NAME}.gz`);
    fs.writeFileSync(file, zlib.gzipSync(original, { level: 1 }));
    const archivedAt = new Date("2026-11-01T10:00:00Z");
    fs.utimesSync(file, archivedAt, archivedAt);
    const before = fs.statSync(file).size;
    await trimSegment(file);
    // Still dated when it was archived: the retention window reads that.
    expect(fs.statSync(file).mtime).toEqual(archivedAt);
    // 100,000 bytes of WAL kept, up to the end of their page.
    expect(isize(file)).toBe(Math.ceil(100_000 / 8192) * 8192);
    expect(fs.statSync(file).size).toBeLessThan(before);
    const trimmed = fs.readFileSync(file);
    await trimSegment(file);
    expect(fs.readFileSync(file).equals(trimmed)).toBe(true);

    // The shell's restore (gzip, then dd padding with zeros), and node's (Windows).
    const target = path.join(dir, "RECOVERYXLOG");
    restore(dir, NAME, target);
    expect(fs.readFileSync(target).equals(original)).toBe(true);
    fs.rmSync(target);
    execFileSync(process.execPath, [
      path.join("dist", "cli", "wal-command.cjs"),
      "restore",
      path.join(dir, NAME),
      target,
    ]);
    expect(fs.readFileSync(target).equals(original)).toBe(true);
  });

  it("leave alone what is not such a segment: a full one, and a timeline history file, restored as it is", async () => {
    const dir = tempDir();
    // WAL to the segment's end (compressible, so small enough to be looked at).
    const full = Buffer.alloc(SEGMENT, 7);
    const file = path.join(dir, `${NAME}.gz`);
    fs.writeFileSync(file, zlib.gzipSync(full, { level: 1 }));
    const zipped = fs.readFileSync(file);
    await trimSegment(file);
    expect(fs.readFileSync(file).equals(zipped)).toBe(true);

    const history = "1\t0/3000000\tno recovery target specified\n";
    fs.writeFileSync(path.join(dir, "00000002.history.gz"), zlib.gzipSync(Buffer.from(history)));
    const target = path.join(dir, "RECOVERYHISTORY");
    restore(dir, "00000002.history", target);
    expect(fs.readFileSync(target, "utf8")).toBe(history);
    // No such segment: the restore fails, as recovery expects at the end of the archive.
    expect(() => restore(dir, "000000010000000000000009", path.join(dir, "missing"))).toThrow();
  });
});
