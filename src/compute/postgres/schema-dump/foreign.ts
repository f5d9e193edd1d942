import type { PgClient } from "../../../platform/pg.js";
import { type Entry, literal, notInExtension, type Quote, RANK, rows, str } from "./entries.js";

/**
 * The schema dump's foreign servers, as pg_dump's dumpForeignServer writes them, each followed by
 * its user mappings (dumpUserMappings, with their options: pg_dump prints a mapping's password
 * too). The foreign data wrappers themselves come with the extensions that make them.
 */
export async function foreignServers(client: PgClient, quote: Quote): Promise<Entry[]> {
  const mappings = await rows(
    client,
    `SELECT m.srvid AS server, m.usename AS name, ${options("m.umoptions")} AS options
       FROM pg_user_mappings m ORDER BY m.usename COLLATE "C"`,
  );
  const found = await rows(
    client,
    `SELECT s.oid, s.srvname AS name, quote_ident(s.srvname) AS ident, s.srvtype AS type, s.srvversion AS version,
            quote_ident(w.fdwname) AS wrapper, ${options("s.srvoptions")} AS options,
            pg_get_userbyid(s.srvowner) AS owner, quote_ident(pg_get_userbyid(s.srvowner)) AS owner_ident
       FROM pg_foreign_server s JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw
      WHERE ${notInExtension("pg_foreign_server", "s.oid")}`,
  );
  return found.map((r) => {
    let sql = `CREATE SERVER ${str(r.ident)}`;
    if (r.type) sql += ` TYPE ${literal(str(r.type))}`;
    if (r.version) sql += ` VERSION ${literal(str(r.version))}`;
    sql += ` FOREIGN DATA WRAPPER ${str(r.wrapper)}${optionsClause(r.options)};`;
    const then: Entry[] = mappings
      .filter((m) => String(m.server) === String(r.oid))
      .map((m) => ({
        keys: [],
        rank: RANK.foreignServer,
        type: "USER MAPPING",
        schema: "-",
        name: `USER MAPPING ${str(m.name)} SERVER ${str(r.name)}`,
        owner: str(r.owner),
        sql: `CREATE USER MAPPING FOR ${quote(str(m.name))} SERVER ${str(r.ident)}${optionsClause(m.options)};`,
      }));
    return {
      keys: [`pg_foreign_server:${r.oid}`],
      rank: RANK.foreignServer,
      type: "SERVER",
      schema: "-",
      name: str(r.name),
      owner: str(r.owner),
      sql,
      ownerSql: `ALTER SERVER ${str(r.ident)} OWNER TO ${str(r.owner_ident)};`,
      comments: [
        { key: `pg_foreign_server:${r.oid}:0`, sql: `SERVER ${str(r.ident)}`, tag: `SERVER ${str(r.ident)}` },
      ],
      then,
    };
  });
}

/** Generic options (`k=v` text[]) as pg_dump lists them: `name 'value'`, by name, one per line. */
export const options = (column: string) =>
  `array_to_string(ARRAY(SELECT quote_ident(option_name) || ' ' || quote_literal(option_value)
                           FROM pg_options_to_table(${column}) ORDER BY option_name), E',\\n    ')`;

/** ` OPTIONS (…)` for an options list built by `options`, or nothing when it is empty. */
export const optionsClause = (list: unknown) => (list ? ` OPTIONS (\n    ${str(list)}\n)` : "");
