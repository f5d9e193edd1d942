import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { closedToServers, runsAsRoot } from "../../src/compute/postgres/process.js";
import { tempDir } from "../helpers/server.js";

describe("a data folder Postgres' unprivileged user cannot reach (the emulator as root)", () => {
  it.runIf(runsAsRoot())("is named by the first folder on the way that others cannot pass", () => {
    const top = tempDir();
    fs.chmodSync(top, 0o755);
    const home = path.join(top, "home");
    fs.mkdirSync(path.join(home, "app"), { recursive: true, mode: 0o700 });
    fs.chmodSync(home, 0o700);
    expect(closedToServers(path.join(home, "app", "data"))).toBe(home);
    fs.chmodSync(home, 0o711);
    fs.chmodSync(path.join(home, "app"), 0o711);
    expect(closedToServers(path.join(home, "app", "data"))).toBeUndefined();
  });
});
