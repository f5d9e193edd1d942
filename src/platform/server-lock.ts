import fs from "node:fs";
import path from "node:path";

/** Why a server cannot take its database file: another live process serves it. */
export class DatabaseInUse extends Error {}

/**
 * One server per database file: `<file>.server` holds the serving process's id while it runs. A
 * second server on the same file would run a second worker and a second clock over the same rows
 * (a manual clock could go back); it refuses to start instead. A file left by a process that is
 * gone (SIGKILL, a crash) is taken over. The keys CLI is not a server and takes no claim.
 * Returns the release, which the process's exit also runs.
 */
export function claimDatabase(file: string): () => void {
  if (file === ":memory:") return () => {};
  const claim = `${path.resolve(file)}.server`;
  fs.mkdirSync(path.dirname(claim), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(claim, String(process.pid), { flag: "wx", mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw err;
    }
    const holder = Number(readOrEmpty(claim));
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder))
      throw new DatabaseInUse(
        `another neon-emulator (pid ${holder}) already serves ${file}: stop it first, or set NEON_EMULATOR_DB to another file`,
      );
    fs.rmSync(claim, { force: true });
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    if (readOrEmpty(claim) === String(process.pid)) fs.rmSync(claim, { force: true });
  };
  process.once("exit", release);
  return release;
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    return "";
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  return !isZombie(pid);
}

/**
 * A process that ended and was not yet reaped by its parent (SIGKILLed, its parent not waiting
 * yet) still answers signal 0; Linux says so in /proc (state Z). Elsewhere: not known, so not.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state …: the name may hold spaces and parentheses, so the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}
