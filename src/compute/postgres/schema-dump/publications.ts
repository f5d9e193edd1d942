import type { PgClient } from "../../../platform/pg.js";
import { type Entry, RANK, type Relation, rows, str, strs } from "./entries.js";

/**
 * The schema dump's publications, as pg_dump's dumpPublication, dumpPublicationTable and
 * dumpPublicationNamespace write them: the publication with what it publishes, then each table it
 * names (only those the dump holds) and each schema whose tables it takes.
 */
export async function publications(
  client: PgClient,
  rels: Map<string, Relation>,
  serverVersion: number,
): Promise<Entry[]> {
  const entries: Entry[] = [];
  const published = await rows(
    client,
    `SELECT p.oid, p.pubname AS name, quote_ident(p.pubname) AS ident, pg_get_userbyid(p.pubowner) AS owner,
            quote_ident(pg_get_userbyid(p.pubowner)) AS owner_ident, p.puballtables AS all_tables,
            array_remove(ARRAY[CASE WHEN p.pubinsert THEN 'insert' END, CASE WHEN p.pubupdate THEN 'update' END,
                               CASE WHEN p.pubdelete THEN 'delete' END, CASE WHEN p.pubtruncate THEN 'truncate' END],
                         NULL) AS actions,
            p.pubviaroot AS via_root, to_jsonb(p) ->> 'pubgencols' AS generated_columns
       FROM pg_publication p`,
  );
  // By oid: each publication's name, quoted (for statements) and as is (for headers), and owner.
  const idents = new Map(published.map((r) => [String(r.oid), str(r.ident)]));
  const names = new Map(published.map((r) => [String(r.oid), str(r.name)]));
  const owners = new Map(published.map((r) => [String(r.oid), str(r.owner)]));
  const since15 = serverVersion >= 150000;
  for (const r of published) {
    let sql = `CREATE PUBLICATION ${str(r.ident)}`;
    if (r.all_tables) sql += " FOR ALL TABLES";
    sql += ` WITH (publish = '${strs(r.actions).join(", ")}'`;
    if (r.via_root) sql += ", publish_via_partition_root = true";
    if (r.generated_columns === "s") sql += ", publish_generated_columns = stored";
    entries.push({
      keys: [`pg_publication:${r.oid}`],
      rank: RANK.publication,
      type: "PUBLICATION",
      schema: "-",
      name: str(r.name),
      owner: str(r.owner),
      sql: `${sql});`,
      ownerSql: `ALTER PUBLICATION ${str(r.ident)} OWNER TO ${str(r.owner_ident)};`,
      comments: [
        {
          key: `pg_publication:${r.oid}:0`,
          sql: `PUBLICATION ${str(r.ident)}`,
          tag: `PUBLICATION ${str(r.ident)}`,
        },
      ],
    });
  }
  for (const r of await rows(
    client,
    // Row filters and column lists came with Postgres 15.
    since15
      ? `SELECT pr.oid, pr.prpubid AS publication, pr.prrelid AS rel, pg_get_expr(pr.prqual, pr.prrelid) AS qual,
                (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY s.i)
                   FROM unnest(pr.prattrs) WITH ORDINALITY AS s(num, i)
                   JOIN pg_attribute a ON a.attrelid = pr.prrelid AND a.attnum = s.num) AS columns
           FROM pg_publication_rel pr`
      : "SELECT pr.oid, pr.prpubid AS publication, pr.prrelid AS rel, NULL AS qual, NULL AS columns FROM pg_publication_rel pr",
  )) {
    const rel = rels.get(String(r.rel));
    if (!rel) continue;
    let sql = `ALTER PUBLICATION ${idents.get(String(r.publication))} ADD TABLE ONLY ${rel.qname}`;
    if (r.columns !== null) sql += ` (${str(r.columns)})`;
    if (r.qual !== null) sql += ` WHERE (${str(r.qual)})`;
    entries.push({
      keys: [`pg_publication_rel:${r.oid}`],
      rank: RANK.publicationTable,
      type: "PUBLICATION TABLE",
      schema: rel.schema,
      name: `${names.get(String(r.publication))} ${rel.name}`,
      sortName: rel.name,
      owner: owners.get(String(r.publication)) ?? "",
      sql: `${sql};`,
      after: [`pg_publication:${r.publication}`, `pg_class:${rel.oid}`],
    });
  }
  if (!since15) return entries;
  for (const r of await rows(
    client,
    `SELECT pn.oid, pn.pnpubid AS publication, n.nspname AS schema, quote_ident(n.nspname) AS ident
       FROM pg_publication_namespace pn JOIN pg_namespace n ON n.oid = pn.pnnspid`,
  ))
    entries.push({
      keys: [`pg_publication_namespace:${r.oid}`],
      rank: RANK.publicationSchema,
      type: "PUBLICATION TABLES IN SCHEMA",
      schema: str(r.schema),
      name: `${names.get(String(r.publication))} ${str(r.schema)}`,
      sortName: str(r.schema),
      owner: owners.get(String(r.publication)) ?? "",
      sql: `ALTER PUBLICATION ${idents.get(String(r.publication))} ADD TABLES IN SCHEMA ${str(r.ident)};`,
      after: [`pg_publication:${r.publication}`],
    });
  return entries;
}
