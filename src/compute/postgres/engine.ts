import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { PgBinaries } from "./binaries.js";
import { NEON_SUPERUSER } from "./reconcile.js";

/**
 * Neon's computes let the members of neon_superuser create contrib extensions stock Postgres keeps
 * to superusers: Neon's build appends `trusted = true` to their control files (its
 * compute-node.Dockerfile) and patches two of them so neon_superuser can use what they make
 * (`pg_stat_statements_reset()`, the `postgres_fdw` wrapper). The Postgres packages are stock, and
 * Postgres reads control files from the share folder beside its executable, so servers run from an
 * installation of their own made from the package's: `<data>/engines/pg<major>-<key>/`, its
 * executables hard links (or copies) of the package's, `lib` a link to the package's libraries and
 * extension modules, `share` the package's folders with hard links of its files, but for those
 * control and script files, new files changed as Neon changes them. Made once per package version
 * (the key); nothing in node_modules is changed.
 */

/** The contrib extensions Neon's build marks trusted (creatable by any role with CREATE on the database). */
export const NEON_TRUSTED_EXTENSIONS = [
  "autoinc",
  "bloom",
  "dblink",
  "earthdistance",
  "insert_username",
  "intagg",
  "moddatetime",
  "pg_stat_statements",
  "pgrowlocks",
  "pgstattuple",
  "postgres_fdw",
  "refint",
  "xml2",
] as const;

/** A build folder this old was left by a build cut short. */
const LEFTOVER_MS = 10 * 60_000;

/** Changes to what the engine holds bump this, so folders made by an older emulator are made again. */
const FORMAT = 1;

/** Neon's grants, appended to the scripts that make what they grant (its patches to contrib). */
function patchScript(extension: string, file: string, text: string): string {
  if (extension === "pg_stat_statements") {
    // Every script that revokes pg_stat_statements_reset from PUBLIC grants it to neon_superuser.
    return text.replace(
      /^REVOKE ALL ON FUNCTION (pg_stat_statements_reset\([^)]*\)) FROM PUBLIC;\r?$/gm,
      (line, fn: string) => `${line}\nGRANT EXECUTE ON FUNCTION ${fn} TO ${NEON_SUPERUSER};`,
    );
  }
  if (extension === "postgres_fdw" && file === "postgres_fdw--1.0.sql")
    return `${text}\nGRANT USAGE ON FOREIGN DATA WRAPPER postgres_fdw TO ${NEON_SUPERUSER};\n`;
  return text;
}

/** The package's share folder that holds `extension/`, relative to its root (`share/postgresql` or `share`). */
function shareLayout(root: string): string | undefined {
  for (const rel of [path.join("share", "postgresql"), "share"])
    if (fs.existsSync(path.join(root, rel, "extension"))) return rel;
  return undefined;
}

/** A hard link of `from` at `to`, or a copy where links cannot be made (another file system, Windows' limits). */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await fs.promises.link(from, to);
  } catch {
    await fs.promises.copyFile(from, to);
  }
}

/** `from`'s folders made again under `to`, its files hard links (or copies) of the package's. */
async function linkTree(from: string, to: string): Promise<void> {
  await fs.promises.mkdir(to, { recursive: true, mode: 0o755 });
  for (const entry of await fs.promises.readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) await linkTree(source, target);
    else await linkOrCopy(source, target);
  }
}

/**
 * A file of the engine given new content: a new file renamed over the link (never opened through
 * it), so the package's file stays as it is.
 */
async function replaceFile(file: string, text: string): Promise<void> {
  const fresh = `${file}.new`;
  await fs.promises.writeFile(fresh, text, { mode: 0o644, flag: "wx" });
  await fs.promises.rename(fresh, file);
}

/**
 * The installation servers of `bin`'s major run from, made under `enginesDir` if it is not there
 * yet. Undefined when the binaries' folders are not laid out as the packages' are (`bin`, `lib`,
 * `share` under one root), e.g. a system installation NEON_EMULATOR_PG_BIN names: those run as they are.
 */
export async function neonEngine(bin: PgBinaries, enginesDir: string): Promise<PgBinaries | undefined> {
  const root = path.dirname(fs.realpathSync(bin.binDir));
  const share = shareLayout(root);
  if (!share || !fs.existsSync(path.join(root, "lib"))) return undefined;
  const stat = fs.statSync(bin.postgres);
  const key = createHash("sha256")
    .update(JSON.stringify([FORMAT, root, stat.size, stat.mtimeMs, NEON_TRUSTED_EXTENSIONS]))
    .digest("hex")
    .slice(0, 12);
  const name = `pg${bin.major}-${key}`;
  const dir = path.join(enginesDir, name);
  const engine = {
    ...bin,
    binDir: path.join(dir, "bin"),
    postgres: path.join(dir, "bin", path.basename(bin.postgres)),
  };
  if (fs.existsSync(path.join(dir, "bin"))) return engine;

  // Folders above a data folder let the servers' user through (0711); the engine is theirs to read.
  const fsp = fs.promises;
  await fsp.mkdir(enginesDir, { recursive: true, mode: 0o711 });
  // Builds cut short (a crash) leave their folders: gone once old enough that no build can still
  // be under way in them.
  for (const left of await fsp.readdir(enginesDir)) {
    if (!left.startsWith(`.${name}.tmp-`)) continue;
    const folder = path.join(enginesDir, left);
    const made = (await fsp.stat(folder).catch(() => undefined))?.mtimeMs ?? Date.now();
    if (Date.now() - made > LEFTOVER_MS)
      await fsp.rm(folder, { recursive: true, force: true }).catch(() => undefined);
  }
  const work = await fsp.mkdtemp(path.join(enginesDir, `.${name}.tmp-`));
  await fsp.chmod(work, 0o755);
  await fsp.mkdir(path.join(work, "bin"), { mode: 0o755 });
  for (const entry of await fsp.readdir(bin.binDir, { withFileTypes: true }))
    if (entry.isFile())
      await linkOrCopy(path.join(bin.binDir, entry.name), path.join(work, "bin", entry.name));
  await fsp.symlink(path.join(root, "lib"), path.join(work, "lib"), "junction");
  await linkTree(path.join(root, share), path.join(work, share));
  const extensions = path.join(work, share, "extension");
  const files = await fsp.readdir(extensions);
  for (const extension of NEON_TRUSTED_EXTENSIONS) {
    const control = path.join(extensions, `${extension}.control`);
    if (!files.includes(`${extension}.control`)) continue;
    const text = await fsp.readFile(control, "utf8");
    if (!/^\s*trusted\s*=/m.test(text))
      await replaceFile(control, `${text.replace(/\n?$/, "\n")}trusted = true\n`);
    for (const file of files) {
      if (!file.startsWith(`${extension}--`) || !file.endsWith(".sql")) continue;
      const script = path.join(extensions, file);
      const before = await fsp.readFile(script, "utf8");
      const after = patchScript(extension, file, before);
      if (after !== before) await replaceFile(script, after);
    }
  }
  try {
    await fsp.rename(work, dir);
  } catch (err) {
    // Another emulator on the same data folder made it meanwhile: theirs is the same.
    await fsp.rm(work, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, "bin"))) throw err;
  }
  // Engines of other package versions of this major are no longer used (one emulator runs on a
  // data folder); one that cannot be removed now (Windows: a file in use) is left for a later start.
  for (const other of await fsp.readdir(enginesDir))
    if (other.startsWith(`pg${bin.major}-`) && other !== name)
      await fsp.rm(path.join(enginesDir, other), { recursive: true, force: true }).catch(() => undefined);
  return engine;
}
