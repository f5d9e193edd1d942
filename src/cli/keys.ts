import fs from "node:fs";
import { parseArgs } from "node:util";
import type { Ctx } from "../context.js";
import { ensureDefaultAccount } from "../control-plane/accounts/service.js";
import { createApiKey, listApiKeys, revokeApiKey } from "../control-plane/api-keys/service.js";
import { EnvError, readEnv } from "../env.js";
import { RealClock } from "../platform/clock.js";
import { openStorage } from "../platform/db.js";
import { IdGenerator } from "../platform/ids.js";
import { configFromEnv } from "../runtime.js";

const USAGE = `Usage: npm run keys -- <command>

Manage API keys of the default account directly in the database file (NEON_EMULATOR_DB),
with or without the server running.

  create <name>     create a key and print it (shown once)
  list              list keys (never their values)
  revoke <id>       revoke a key
`;

function main(): number {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  const [command, arg] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return command || values.help ? 0 : 2;
  }
  const env = readEnv();
  // Only a key made before the first start makes the database; listing or revoking in a file that
  // does not exist is a wrong path (a new empty database would list no keys).
  if (command !== "create" && !fs.existsSync(env.NEON_EMULATOR_DB)) {
    process.stderr.write(
      `no database at ${env.NEON_EMULATOR_DB}: set NEON_EMULATOR_DB to the file the emulator runs on\n`,
    );
    return 2;
  }
  const storage = openStorage(env.NEON_EMULATOR_DB);
  try {
    const ctx: Ctx = {
      db: storage.db,
      clock: new RealClock(),
      ids: new IdGenerator(),
      config: configFromEnv(env),
    };
    const account = ensureDefaultAccount(ctx);
    switch (command) {
      case "create": {
        if (!arg || arg.length > 64) {
          process.stderr.write("create needs a key name of 1 to 64 characters\n");
          return 2;
        }
        const created = createApiKey(ctx, account.id, arg);
        process.stdout.write(`${created.key}\n`);
        process.stderr.write(`created key ${created.id} "${created.name}"; it is shown only this once\n`);
        return 0;
      }
      case "list":
        process.stdout.write(`${JSON.stringify(listApiKeys(ctx, account.id), null, 2)}\n`);
        return 0;
      case "revoke": {
        const id = Number(arg);
        if (!Number.isInteger(id) || id <= 0) {
          process.stderr.write("revoke needs a numeric key id (see: list)\n");
          return 2;
        }
        process.stdout.write(`${JSON.stringify(revokeApiKey(ctx, account.id, id))}\n`);
        return 0;
      }
      default:
        process.stderr.write(`unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } finally {
    storage.close();
  }
}

try {
  process.exitCode = main();
} catch (err) {
  process.stderr.write(`${err instanceof EnvError ? err.message : (err as Error).message}\n`);
  process.exitCode = 1;
}
