import { execFileSync } from "node:child_process";

/** Compiles src/ to dist/ once, so real-server tests run exactly what `npm start` runs. */
export default function setup(): void {
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
}
