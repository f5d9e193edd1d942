import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { endRunning, run } from "../../src/compute/postgres/child-process.js";

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

describe.runIf(process.platform !== "win32")("run(): what a program's end says", () => {
  it("its output; a failure's exit code and stderr in the error; a missing program's ENOENT", async () => {
    expect(await run("sh", ["-c", "echo out; echo err >&2"])).toEqual({ stdout: "out\n", stderr: "err\n" });
    await expect(run("sh", ["-c", "echo refused >&2; exit 3"])).rejects.toMatchObject({
      message: "Command failed: sh -c echo refused >&2; exit 3\nrefused\n",
      code: 3,
      stderr: "refused\n",
    });
    await expect(run("no-such-program-here", [])).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a timeout ends the program and what it started (its group); endRunning ends every program still running", async () => {
    const started = Date.now();
    await expect(run("sh", ["-c", "sleep 20 & sleep 20"], { timeout: 200 })).rejects.toMatchObject({
      signal: "SIGTERM",
    });
    const ended = run("sh", ["-c", "sleep 20 & sleep 20"]);
    await new Promise((r) => setTimeout(r, 100));
    endRunning();
    await expect(ended).rejects.toMatchObject({ signal: "SIGKILL" });
    // Neither waited for its sleeps (the pipes a child holds close with its group).
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
