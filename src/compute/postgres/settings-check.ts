import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Logger } from "pino";
import { COMPUTE_SIZES, maxConnections, SHARED_BUFFERS } from "../../control-plane/endpoints/rules.js";
import type { InstalledBinaries, PgBinaries } from "./binaries.js";
import { run } from "./child-process.js";
import type { DataLayout } from "./layout.js";
import { handOverFile, serverEnvironment, serverIdentity } from "./process.js";
import { OVERRIDDEN_SETTINGS } from "./server-settings.js";

/** The longest `postgres -C` may take to check an endpoint's pg_settings. */
const SETTINGS_CHECK_TIMEOUT_MS = 10_000;
/** How many settings found taken are remembered per major. */
const TAKEN_SETTINGS_KEPT = 1000;
/** Settings a start check leaves out: the control plane checks them against the compute's size, or a compute sets them. */
const SIZED_ELSEWHERE = new Set(["superuser_reserved_connections", "reserved_connections", "wal_level"]);

/** Checks an endpoint's pg_settings against the Postgres binaries that would run them, before they are taken. */
export class SettingsCheck {
  constructor(
    private readonly binaries: InstalledBinaries,
    private readonly layout: DataLayout,
    /** The major's template folder (made at need). */
    private readonly template: (major: number) => Promise<string>,
    private readonly logger?: Logger,
  ) {}

  /** Settings Postgres took, by major (`name=value`): a request repeating them spawns nothing. */
  private readonly takenSettings = new Map<number, Set<string>>();

  /**
   * Why Postgres `major` would refuse these settings (an unknown one, a value of the wrong type or
   * outside its range, one that cannot be changed), in its own words; null when it takes them.
   * Asked of the postgres binary itself: `postgres -C` reads its settings as a start does, then
   * prints one and exits; then what only a start checks (startProblem).
   */
  async problem(major: number, settings: Record<string, string>): Promise<string | null> {
    const bin = this.binaries.get(major);
    if (!bin) return null;
    const taken = this.takenSettings.get(major) ?? new Set<string>();
    const asked = Object.entries(settings).filter(
      ([name, value]) => !taken.has(`${name}=${value}`) && !OVERRIDDEN_SETTINGS.has(name.toLowerCase()),
    );
    if (!asked.length) return null;
    const nul = asked.find(([, value]) => value.includes("\0"));
    if (nul) return `the value of ${nul[0]} holds a NUL character`;
    const args = ["-D", this.settingsCheckDir(), "-C", "port"];
    for (const [name, value] of asked) args.push("-c", `${name}=${value}`);
    const problem = (await this.askPostgres(bin, args)) ?? (await this.startProblem(bin, asked));
    if (problem) return problem;
    if (taken.size + asked.length > TAKEN_SETTINGS_KEPT) taken.clear();
    for (const [name, value] of asked) taken.add(`${name}=${value}`);
    this.takenSettings.set(major, taken);
    return null;
  }

  /**
   * What no compute could start with, which Postgres checks only at start: settings against one
   * another (`max_worker_processes` and the others a server's processes count against its limit)
   * and the shared memory they size, against this machine's memory. Asked of `postgres -C
   * shared_memory_size` (Postgres 15+) on the major's template folder at the smallest compute's
   * max_connections, which the need only grows with; the connections reserved for superusers,
   * which depend on the size alone, are the control plane's rule (sizedSettingsProblem), and
   * `wal_level=minimal` becomes `replica` on a compute.
   */
  private async startProblem(bin: PgBinaries, asked: [string, string][]): Promise<string | undefined> {
    if (bin.major < 15) return undefined;
    const template = await this.template(bin.major).catch(() => undefined);
    if (!template) return undefined; // the compute's start will say
    const args = ["-D", template, "-C", "shared_memory_size"];
    for (const [name, value] of asked)
      if (!SIZED_ELSEWHERE.has(name.toLowerCase())) args.push("-c", `${name}=${value}`);
    args.push(
      "-c",
      `max_connections=${maxConnections(COMPUTE_SIZES[0])}`,
      "-c",
      `shared_buffers=${SHARED_BUFFERS}`,
    );
    return await this.askPostgres(bin, args, (stdout) => {
      const needed = Number(stdout.trim());
      const machine = Math.floor(os.totalmem() / 2 ** 20);
      return needed > machine
        ? `these settings need ${needed} MB of shared memory, more than this machine's ${machine} MB`
        : undefined;
    });
  }

  /**
   * Runs `postgres` with `args` (a `-C` check): its refusal in its own words (FATAL, with its HINT),
   * what `judge` makes of what it printed, else undefined (also when the check itself failed: the
   * compute's start says what it refuses).
   */
  private async askPostgres(
    bin: PgBinaries,
    args: string[],
    judge?: (stdout: string) => string | undefined,
  ): Promise<string | undefined> {
    try {
      const { stdout } = await run(bin.postgres, args, {
        ...serverIdentity(),
        env: serverEnvironment(),
        timeout: SETTINGS_CHECK_TIMEOUT_MS,
      });
      return judge?.(stdout);
    } catch (err) {
      const stderr = String((err as { stderr?: unknown }).stderr ?? "");
      const refused = /FATAL:\s+(.*)/.exec(stderr)?.[1];
      if (refused) {
        const hint = /HINT:\s+(.*)/.exec(stderr)?.[1];
        return hint ? `${refused} (${hint})` : refused;
      }
      this.logger?.warn({ major: bin.major, error: (err as Error).message }, "could not check pg_settings");
      return undefined;
    }
  }

  private checkDirReady = false;

  /**
   * A folder with an empty postgresql.conf, where `postgres -C` reads no one's settings but the ones
   * given: the servers' user's alone, as every folder under the data folder (one an earlier build
   * left readable by all is made so once per process), made again if it went.
   */
  private settingsCheckDir(): string {
    const dir = this.layout.settingsCheck();
    const file = path.join(dir, "postgresql.conf");
    if (!this.checkDirReady || !fs.existsSync(file)) {
      fs.mkdirSync(this.layout.dataDir, { recursive: true, mode: 0o711 });
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (!fs.existsSync(file)) fs.writeFileSync(file, "", { mode: 0o600 });
      fs.chmodSync(dir, 0o700);
      fs.chmodSync(file, 0o600);
      handOverFile(dir);
      handOverFile(file);
      this.checkDirReady = true;
    }
    return dir;
  }
}
