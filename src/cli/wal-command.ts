import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";

const SEGMENT_BYTES = 16 * 1024 * 1024;

/**
 * The archive_command and restore_command of computes where the shell Postgres runs them with
 * has no gzip, mv or cp (Windows' cmd.exe; see unixTools), as node runs them:
 * - `archive <segment> <file.gz>`: the segment gzipped (level 1, as `gzip -1`) into a temporary
 *   file renamed into place once whole;
 * - `restore <staged> <target>`: `<staged>.gz` unpacked, else `<staged>` copied, to the target; a
 *   segment archived without its zeroed tail is padded back to a segment's 16 MB.
 * Exits with 1 when that fails (for a restore: no such segment, which is how recovery learns it).
 */
const [mode, from, to] = process.argv.slice(2);
try {
  if (!from || !to) throw new Error("usage: wal-command archive|restore <from> <to>");
  if (mode === "archive") {
    const work = `${to}.tmp`;
    fs.writeFileSync(work, zlib.gzipSync(fs.readFileSync(from), { level: 1 }));
    fs.renameSync(work, to);
  } else if (mode === "restore") {
    const packed = fs.existsSync(`${from}.gz`);
    const bytes = packed ? zlib.gunzipSync(fs.readFileSync(`${from}.gz`)) : fs.readFileSync(from);
    fs.writeFileSync(to, bytes);
    if (/^[0-9A-F]{24}$/.test(path.basename(from)) && bytes.length < SEGMENT_BYTES)
      fs.truncateSync(to, SEGMENT_BYTES);
  } else throw new Error(`unknown mode ${mode}`);
} catch (err) {
  if (mode !== "restore" || (err as NodeJS.ErrnoException).code !== "ENOENT")
    process.stderr.write(`wal-command ${mode}: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
