import fs from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");

/** package.json's start script. */
export function startScript(root = ROOT): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
    scripts: { start: string };
  };
  return pkg.scripts.start;
}

/**
 * The node arguments of `npm start`'s first command (package.json scripts.start: `node
 * --snapshot-blob dist/main.blob dist/main.cjs || <fallback without the snapshot>`) with its
 * dist/ paths made absolute, so real-server tests and the benchmark spawn exactly what users run.
 * `root` is the project folder whose package.json and dist/ are used (the benchmark runs a
 * private copy, or another commit's build).
 */
export function startArgs(root = ROOT): string[] {
  const script = startScript(root);
  const words = script.split("||")[0]?.trim().split(/\s+/) ?? [];
  if (words[0] !== "node") throw new Error(`scripts.start must begin with a node command: ${script}`);
  return words.slice(1).map((w) => (w.startsWith("dist/") ? path.join(root, w) : w));
}
