import { PGlite } from "@electric-sql/pglite";
import { citext } from "@electric-sql/pglite/contrib/citext";
import { file_fdw } from "@electric-sql/pglite/contrib/file_fdw";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";
import { pgDump } from "@electric-sql/pglite-tools/pg_dump";
import { describe, expect, it } from "vitest";
import { dumpSchema } from "../../src/compute/postgres/schema-dump/index.js";
import type { PgClient } from "../../src/platform/pg.js";
import {
  APP,
  COLLATIONS,
  FOREIGN,
  FUNCTIONS,
  NAMES,
  PRIVILEGES,
  ROLES,
  SCHEMA,
  TEXT_SEARCH,
} from "./schema-dump-fixtures.js";

/**
 * The schema dump against pg_dump itself. The Postgres packages the emulator runs ship no pg_dump,
 * so this takes Postgres 17 built to WebAssembly (PGlite) and Postgres 17's pg_dump built the same
 * way (pglite-tools): after each fixture's statements, dumpSchema given that database must print
 * what `pg_dump --schema-only` prints, byte for byte.
 */
async function bothDumps(statements: string[]): Promise<{ ours: string; theirs: string }> {
  const pg = await PGlite.create({ extensions: { citext, file_fdw, unaccent } });
  try {
    for (const role of ROLES) await pg.exec(`CREATE ROLE ${role} NOLOGIN`);
    // As on Neon, the database belongs to a role that is not a superuser.
    await pg.exec(
      "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I OWNER TO owner1', current_database()); END $$",
    );
    for (const statement of statements) await pg.exec(statement);
    await pg.exec("RESET ROLE");
    const client = { query: (sql: string, params?: unknown[]) => pg.query(sql, params) };
    const ours = await dumpSchema(client as unknown as PgClient);
    const theirs = await (await pgDump({ pg, args: ["--schema-only"] })).text();
    return { ours, theirs };
  } finally {
    await pg.close();
  }
}

describe("the schema dump is pg_dump's text", () => {
  it.each([
    ["one object of each kind, some needing others whose names sort later", SCHEMA],
    ["grants, revokes and default privileges", PRIVILEGES],
    ["functions and procedures with their attributes", FUNCTIONS],
    ["names that need quoting, comments on each kind, keys, triggers, nested partitions", NAMES],
    ["an ORM's tables, and publications", APP],
    ["collations and extended statistics", COLLATIONS],
    ["foreign servers, user mappings and foreign tables", FOREIGN],
    ["text search dictionaries and configurations", TEXT_SEARCH],
  ])(
    "%s",
    async (_, statements) => {
      const { ours, theirs } = await bothDumps(statements);
      expect(theirs).toContain("CREATE"); // pg_dump ran and saw the objects
      expect(ours).toBe(theirs);
    },
    120_000,
  );
});
