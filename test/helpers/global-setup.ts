import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Bundles src/ into dist/ once (`npm run build`), so real-server tests run exactly what `npm start`
 * runs; and gives the run one temporary folder (NEON_EMULATOR_TEST_TMP) that every test's temporary
 * folders live in, removed when the run ends: a test process that vitest ends without its exit
 * handlers (tempDir's own cleanup) leaves nothing behind, Postgres data folders included.
 */
export default function setup(): () => void {
  execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "neon-emulator-test-"));
  // Postgres servers run as another user when the tests run as root: they must get through it.
  fs.chmodSync(root, 0o755);
  process.env.NEON_EMULATOR_TEST_TMP = root;
  return () => fs.rmSync(root, { recursive: true, force: true });
}
