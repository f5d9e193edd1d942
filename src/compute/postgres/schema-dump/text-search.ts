import type { PgClient } from "../../../platform/pg.js";
import { type Entry, notInExtension, RANK, type Row, rows, str, userSchema } from "./entries.js";

/**
 * The schema dump's text search dictionaries and configurations, as pg_dump's dumpTSDictionary and
 * dumpTSConfig write them: a dictionary with its template and options, a configuration with its
 * parser and then one ADD MAPPING per token type. Parsers and templates need C functions, which
 * only extensions bring.
 */
export async function textSearch(client: PgClient): Promise<Entry[]> {
  const dictionaries = await rows(
    client,
    `SELECT d.oid, n.nspname AS schema, d.dictname AS name, quote_ident(d.dictname) AS ident,
            format('%I.%I', n.nspname, d.dictname) AS qname, format('%I.%I', tn.nspname, t.tmplname) AS template,
            d.dictinitoption AS options,
            pg_get_userbyid(d.dictowner) AS owner, quote_ident(pg_get_userbyid(d.dictowner)) AS owner_ident
       FROM pg_ts_dict d JOIN pg_namespace n ON n.oid = d.dictnamespace
       JOIN pg_ts_template t ON t.oid = d.dicttemplate JOIN pg_namespace tn ON tn.oid = t.tmplnamespace
      WHERE ${userSchema("n")} AND ${notInExtension("pg_ts_dict", "d.oid")}`,
  );
  const configurations = await rows(
    client,
    `SELECT c.oid, n.nspname AS schema, c.cfgname AS name, quote_ident(c.cfgname) AS ident,
            format('%I.%I', n.nspname, c.cfgname) AS qname, format('%I.%I', pn.nspname, p.prsname) AS parser,
            (SELECT array_agg(format('%s:%s', quote_ident(t.alias), m.mapdict::regdictionary)
                              ORDER BY m.maptokentype, m.mapseqno)
               FROM pg_ts_config_map m JOIN ts_token_type(c.cfgparser) t ON t.tokid = m.maptokentype
              WHERE m.mapcfg = c.oid) AS mappings,
            pg_get_userbyid(c.cfgowner) AS owner, quote_ident(pg_get_userbyid(c.cfgowner)) AS owner_ident
       FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace
       JOIN pg_ts_parser p ON p.oid = c.cfgparser JOIN pg_namespace pn ON pn.oid = p.prsnamespace
      WHERE ${userSchema("n")} AND ${notInExtension("pg_ts_config", "c.oid")}`,
  );
  const entry = (r: Row, kind: "DICTIONARY" | "CONFIGURATION", sql: string): Entry => ({
    keys: [`${kind === "DICTIONARY" ? "pg_ts_dict" : "pg_ts_config"}:${r.oid}`],
    rank: kind === "DICTIONARY" ? RANK.textSearchDictionary : RANK.textSearchConfiguration,
    type: `TEXT SEARCH ${kind}`,
    schema: str(r.schema),
    name: str(r.name),
    owner: str(r.owner),
    sql,
    ownerSql: `ALTER TEXT SEARCH ${kind} ${str(r.qname)} OWNER TO ${str(r.owner_ident)};`,
    comments: [
      {
        key: `${kind === "DICTIONARY" ? "pg_ts_dict" : "pg_ts_config"}:${r.oid}:0`,
        sql: `TEXT SEARCH ${kind} ${str(r.qname)}`,
        tag: `TEXT SEARCH ${kind} ${str(r.ident)}`,
      },
    ],
  });
  const entries = dictionaries.map((r) => {
    let sql = `CREATE TEXT SEARCH DICTIONARY ${str(r.qname)} (\n    TEMPLATE = ${str(r.template)}`;
    if (r.options !== null) sql += `,\n    ${str(r.options)}`;
    return entry(r, "DICTIONARY", `${sql} );`);
  });
  for (const r of configurations) {
    let sql = `CREATE TEXT SEARCH CONFIGURATION ${str(r.qname)} (\n    PARSER = ${str(r.parser)} );\n`;
    // One ADD MAPPING per token type, its dictionaries in order.
    const byToken = new Map<string, string[]>();
    for (const m of (r.mappings ?? []) as string[]) {
      const colon = m.indexOf(":");
      const token = m.slice(0, colon);
      byToken.set(token, [...(byToken.get(token) ?? []), m.slice(colon + 1)]);
    }
    const mappings = [...byToken].map(
      ([token, dicts]) =>
        `\nALTER TEXT SEARCH CONFIGURATION ${str(r.qname)}\n    ADD MAPPING FOR ${token} WITH ${dicts.join(", ")};\n`,
    );
    sql += mappings.join("");
    entries.push(entry(r, "CONFIGURATION", sql.trimEnd()));
  }
  return entries;
}
