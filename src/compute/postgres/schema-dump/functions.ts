import type { PgClient } from "../../../platform/pg.js";
import { type Entry, notInExtension, RANK, rows, str, userSchema } from "./entries.js";

/** The schema dump's functions and procedures: pg_get_functiondef's text, owner and comment. */

/** Functions, procedures and window functions (not an extension's, not a range type's constructors). */
export async function functions(client: PgClient): Promise<Entry[]> {
  const found = await rows(
    client,
    `SELECT p.oid, n.nspname AS schema, p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS name,
            format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) AS signature,
            p.prokind = 'p' AS procedure, pg_get_functiondef(p.oid) AS def,
            pg_get_userbyid(p.proowner) AS owner, quote_ident(pg_get_userbyid(p.proowner)) AS owner_ident
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE ${userSchema("n")} AND p.prokind IN ('f', 'p', 'w') AND ${notInExtension("pg_proc", "p.oid")}
        -- A range type's constructors come with its CREATE TYPE.
        AND NOT EXISTS (SELECT 1 FROM pg_depend i WHERE i.classid = 'pg_proc'::regclass AND i.objid = p.oid
                          AND i.deptype = 'i')`,
  );
  return found.map((r) => {
    const keyword = r.procedure ? "PROCEDURE" : "FUNCTION";
    return {
      keys: [`pg_proc:${r.oid}`],
      rank: RANK.function,
      type: keyword,
      schema: str(r.schema),
      name: str(r.name),
      owner: str(r.owner),
      sql: `${str(r.def)
        .replace(/^CREATE OR REPLACE /, "CREATE ")
        .trimEnd()};`,
      ownerSql: `ALTER ${keyword} ${str(r.signature)} OWNER TO ${str(r.owner_ident)};`,
      comments: [
        {
          key: `pg_proc:${r.oid}:0`,
          sql: `${keyword} ${str(r.signature)}`,
          tag: `${keyword} ${str(r.name)}`,
        },
      ],
    };
  });
}
