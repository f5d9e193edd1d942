import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";

/**
 * The programs the driver runs (cp, initdb, pg_ctl, …) as a terminal's Ctrl-C meets them: the
 * terminal sends SIGINT to the emulator's whole process group.
 */
it.runIf(process.platform !== "win32")(
  "a program the emulator runs is not sent the SIGINT a terminal sends its process group: it finishes",
  async () => {
    const module = path.resolve("src/compute/postgres/child-process.ts");
    // A process of its own group, as `npm start` in a terminal is, running a program as the driver does.
    const script = `
      import { run } from ${JSON.stringify(module)};
      process.on("SIGINT", () => console.log("interrupted"));
      run("sleep", ["1"]).then(() => console.log("finished"), (err) => console.log("killed by " + err.signal));
      console.log("running");
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      detached: true,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    for (let i = 0; i < 200 && !output.includes("running"); i++) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 200));
    process.kill(-(child.pid as number), "SIGINT");
    await exited;
    expect(output.trim().split("\n")).toEqual(["running", "interrupted", "finished"]);
  },
  20_000,
);
