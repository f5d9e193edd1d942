import type { ComputeDriver } from "./driver.js";

/**
 * NEON_EMULATOR_COMPUTE=none: the control plane alone. Every effect completes at once and
 * touches nothing: operations take their configured durations and move the recorded states only.
 */
export const noneDriver: ComputeDriver = {
  name: "none",
  inline: true,
  perform: () => undefined,
  resume: async () => {},
  discard: async () => {},
  close: async () => {},
};
