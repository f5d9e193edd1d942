import { execFileSync } from "node:child_process";

/** Bundles src/ into dist/ once (`npm run build`), so real-server tests run exactly what `npm start` runs. */
export default function setup(): void {
  execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
}
