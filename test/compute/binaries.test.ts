import { describe, expect, it } from "vitest";
import { findBinaries, InstalledBinaries, type PgBinaries } from "../../src/compute/postgres/binaries.js";

describe("the Postgres majors the emulator can run", () => {
  it("are looked for again when one asked for is missing, so a package installed while it runs is found", () => {
    const installed = [...findBinaries(undefined).keys()];
    expect(installed).toContain(17);
    // As at a start before the package was installed: nothing known yet.
    const majors = new InstalledBinaries(new Map(), undefined);
    expect(majors.has(17)).toBe(true);
    expect(majors.get(17)?.major).toBe(17);
    expect(majors.has(13)).toBe(false);
    expect(majors.installed()).toEqual(installed.sort((a, b) => a - b));
    expect(majors.installCommand(16)).toContain("neon-emulator-pg16");
  });

  it("drop a major whose package npm removed since (a later npm install drops --no-save packages)", () => {
    const gone: PgBinaries = {
      major: 99,
      binDir: "/nonexistent/native/bin",
      initdb: "/nonexistent/native/bin/initdb",
      postgres: "/nonexistent/native/bin/postgres",
      pgCtl: "/nonexistent/native/bin/pg_ctl",
      moduleDir: undefined,
    };
    const majors = new InstalledBinaries(new Map([[99, gone]]), undefined);
    expect(majors.get(99)).toBeUndefined();
    expect(majors.has(99)).toBe(false);
    expect(majors.installed()).not.toContain(99);
    expect(majors.installed()).toContain(17);
  });
});
