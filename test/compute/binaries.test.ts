import { describe, expect, it } from "vitest";
import { findBinaries, installedMajors, type PgBinaries } from "../../src/compute/postgres/binaries.js";

describe("the Postgres majors the emulator can run", () => {
  it("are looked for again when one asked for is missing, so a package installed while it runs is found", () => {
    const installed = [...findBinaries(undefined).keys()];
    expect(installed).toContain(17);
    // As at a start before the package was installed: nothing known yet.
    const known = new Map<number, PgBinaries>();
    const majors = installedMajors(known, undefined);
    expect(majors.has(17)).toBe(true);
    expect(known.get(17)?.major).toBe(17);
    expect(majors.has(13)).toBe(false);
    expect(majors.installed()).toEqual(installed.sort((a, b) => a - b));
    expect(majors.installCommand(16)).toContain("neon-emulator-pg16");
  });
});
