import fs from "node:fs";
import { expect, it } from "vitest";
import { apiCoverage } from "../src/cli/api-coverage.js";

it("the README states the API coverage npm run api-coverage measures", async () => {
  const rows = await apiCoverage();
  const served = rows.filter((r) => r.served).length;
  expect(rows).toHaveLength(163);
  expect(served).toBeGreaterThanOrEqual(140);
  expect(fs.readFileSync("README.md", "utf8")).toContain(
    `**API coverage: ${served} of the ${rows.length} operations**`,
  );
});
