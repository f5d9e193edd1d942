import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real-server suites spawn the compiled server: build it once before any test runs.
    globalSetup: ["test/helpers/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Control-plane suites run without Postgres processes; the data-plane suites ask for them.
    env: { NEON_EMULATOR_COMPUTE: "none" },
  },
});
