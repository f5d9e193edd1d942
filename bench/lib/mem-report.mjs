// Preloaded into the emulator by bench/profile.ts (node --import): on SIGUSR2 it prints one
// JSON line with process.memoryUsage() and V8 heap-space sizes, to explain its RSS.
import v8 from "node:v8";

process.on("SIGUSR2", () => {
  // With --expose-gc, collect first: what remains is retained, not garbage awaiting collection.
  globalThis.gc?.();
  const mb = (n) => Math.round((n / 2 ** 20) * 10) / 10;
  const usage = Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, mb(v)]));
  const spaces = Object.fromEntries(
    v8
      .getHeapSpaceStatistics()
      .map((s) => [s.space_name, { size: mb(s.space_size), used: mb(s.space_used_size) }]),
  );
  process.stderr.write(`MEMREPORT ${JSON.stringify({ usage, spaces })}\n`);
});
