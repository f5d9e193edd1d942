import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

let root: string | undefined;

/**
 * The emulator's own folder (the one holding migrations/ and node_modules/), found by walking up
 * from the running script (dist/main.cjs, src/main.ts under tsx, vitest's worker), then from the
 * working directory. Looked up at run time, never at import: the start-up snapshot evaluates every
 * module when it is built, and a path fixed then would name wherever the build ran.
 */
export function packageRoot(): string {
  if (root) return root;
  const starts = [process.argv[1] && path.dirname(path.resolve(process.argv[1])), process.cwd()];
  for (const start of starts) {
    if (!start) continue;
    for (let dir = start; ; dir = path.dirname(dir)) {
      if (fs.existsSync(path.join(dir, "migrations", "meta", "_journal.json"))) {
        root = dir;
        return dir;
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  throw new Error(
    `cannot find the emulator's migrations/ folder above ${starts.filter(Boolean).join(" or ")}`,
  );
}

/**
 * `require` from the emulator's folder, at run time. For what a start-up snapshot cannot hold and
 * the bundle therefore leaves out: the native SQLite addon and the HTTP adapter (which loads
 * node:http); see main.ts.
 */
export function requireFromPackage(): NodeJS.Require {
  return createRequire(path.join(packageRoot(), "package.json"));
}
