import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  // Each resource keeps its tables beside its store.
  schema: ["./src/control-plane/*/table.ts", "./src/emulator/table.ts", "./src/console/table.ts"],
  out: "./migrations",
});
