import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The emulator's own folder (the one holding migrations/), found by walking up from this module:
 * the same answer from src/ under tsx or vitest and from the bundled dist/main.js.
 */
export function packageRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "migrations", "meta", "_journal.json"))) return dir;
    if (path.dirname(dir) === dir)
      throw new Error(`cannot find the emulator's migrations/ folder above ${from}`);
  }
}
