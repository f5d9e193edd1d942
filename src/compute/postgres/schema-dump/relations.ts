import type { PgClient } from "../../../platform/pg.js";
import {
  columnComments,
  type Entry,
  notInExtension,
  RANK,
  type Relation,
  type RelationParts,
  type Row,
  rows,
  str,
  strs,
  userSchema,
  withOptions,
} from "./entries.js";
import { options } from "./foreign.js";
import { publications } from "./publications.js";
import { sequenceEntries } from "./sequences.js";
import { tableChildren } from "./table-children.js";
import { tableEntries } from "./tables.js";

/**
 * The schema dump's relations: one query for tables, views, materialized views and sequences, one
 * for their columns and one for their constraints; views are built here, sequences, tables and
 * what hangs off tables in the files beside this one.
 */

/** Tables, views, materialized views and sequences, and what hangs off tables. */
export async function relations(client: PgClient, serverVersion: number): Promise<Entry[]> {
  const found = await rows(
    client,
    `SELECT c.oid, c.relkind AS kind, n.nspname AS schema, c.relname AS name, quote_ident(c.relname) AS ident,
            format('%I.%I', n.nspname, c.relname) AS qname, c.reltype, t.typarray,
            pg_get_userbyid(c.relowner) AS owner, quote_ident(pg_get_userbyid(c.relowner)) AS owner_ident,
            -- pg_dump 17 names the kind in ALTER … OWNER TO; before, ALTER TABLE served for all.
            CASE WHEN c.relkind = 'f' THEN 'FOREIGN TABLE'
                 WHEN current_setting('server_version_num')::int < 170000 THEN 'TABLE'
                 ELSE CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE'
                                     ELSE 'TABLE' END END AS owner_kind,
            (SELECT quote_ident(fs.srvname) FROM pg_foreign_table ft JOIN pg_foreign_server fs ON fs.oid = ft.ftserver
              WHERE ft.ftrelid = c.oid) AS foreign_server,
            (SELECT ${options("ft.ftoptions")} FROM pg_foreign_table ft WHERE ft.ftrelid = c.oid) AS foreign_options,
            (SELECT a.amname FROM pg_am a WHERE a.oid = c.relam) AS access_method,
            c.relpersistence = 'u' AS unlogged, coalesce(c.reloptions, '{}')::text[] AS options,
            c.relrowsecurity AS rls, c.relforcerowsecurity AS force_rls, c.relreplident AS replica_identity,
            CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END AS partition_key,
            CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, c.oid) END AS bound,
            (SELECT array_agg(format('%I.%I', pn.nspname, pc.relname) ORDER BY h.inhseqno)
               FROM pg_inherits h JOIN pg_class pc ON pc.oid = h.inhparent
               JOIN pg_namespace pn ON pn.oid = pc.relnamespace WHERE h.inhrelid = c.oid) AS parents,
            (SELECT array_agg('pg_class:' || h.inhparent) FROM pg_inherits h WHERE h.inhrelid = c.oid) AS parent_keys,
            CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END AS view,
            (SELECT 'pg_rewrite:' || w.oid FROM pg_rewrite w WHERE w.ev_class = c.oid AND w.rulename = '_RETURN') AS view_rule,
            format_type(s.seqtypid, NULL) AS seq_type, s.seqstart::text AS seq_start,
            s.seqincrement::text AS seq_increment, s.seqmin::text AS seq_min, s.seqmax::text AS seq_max,
            s.seqcache::text AS seq_cache, s.seqcycle AS seq_cycle,
            o.deptype AS owned_kind, 'pg_class:' || o.refobjid AS owned_table,
            quote_ident(otn.nspname) || '.' || quote_ident(ot.relname) AS owned_table_qname, quote_ident(oa.attname) AS owned_column,
            oa.attidentity AS identity
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_type t ON t.oid = c.reltype
       LEFT JOIN pg_sequence s ON s.seqrelid = c.oid
       LEFT JOIN pg_depend o ON c.relkind = 'S' AND o.classid = 'pg_class'::regclass AND o.objid = c.oid
             AND o.refclassid = 'pg_class'::regclass AND o.refobjsubid > 0 AND o.deptype IN ('a', 'i')
       LEFT JOIN pg_class ot ON ot.oid = o.refobjid
       LEFT JOIN pg_namespace otn ON otn.oid = ot.relnamespace
       LEFT JOIN pg_attribute oa ON oa.attrelid = o.refobjid AND oa.attnum = o.refobjsubid
      WHERE ${userSchema("n")} AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND ${notInExtension("pg_class", "c.oid")}`,
  );
  const rels = new Map<string, Relation>();
  for (const r of found)
    rels.set(String(r.oid), {
      oid: r.oid,
      kind: str(r.kind),
      schema: str(r.schema),
      name: str(r.name),
      qname: str(r.qname),
      owner: str(r.owner),
      ownerIdent: str(r.owner_ident),
      ident: str(r.ident),
    });
  const oids = [...rels.keys()];
  const columns = await rows(
    client,
    `SELECT a.attrelid AS rel, a.attnum AS num, a.attname AS name, quote_ident(a.attname) AS ident,
            format_type(a.atttypid, a.atttypmod) AS type,
            CASE WHEN a.attcollation <> t.typcollation THEN format('%I.%I', cn.nspname, co.collname) END AS collation,
            a.attnotnull AS notnull, a.attgenerated AS generated, a.attislocal AS local,
            -- Postgres 18 keeps NOT NULL as a named constraint.
            nn.conname AS notnull_name, quote_ident(nn.conname) AS notnull_ident, nn.connoinherit AS notnull_noinherit,
            -- What pg_dump sets with ALTER COLUMN: a statistics target (-1 or, on 17+, null: the
            -- default), a storage other than the type's, a compression, attribute options.
            CASE WHEN a.attstattarget >= 0 THEN a.attstattarget END AS stattarget,
            CASE WHEN a.attstorage <> t.typstorage THEN
              CASE a.attstorage WHEN 'p' THEN 'PLAIN' WHEN 'e' THEN 'EXTERNAL' WHEN 'x' THEN 'EXTENDED'
                                WHEN 'm' THEN 'MAIN' END END AS storage,
            CASE a.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END AS compression,
            array_to_string(a.attoptions, ', ') AS attoptions, ${options("a.attfdwoptions")} AS fdw_options,
            d.oid AS default_oid, pg_get_expr(d.adbin, d.adrelid) AS default,
            EXISTS (SELECT 1 FROM pg_depend u JOIN pg_depend o ON o.classid = 'pg_class'::regclass
                       AND o.objid = u.refobjid AND o.refclassid = 'pg_class'::regclass
                       AND o.refobjid = a.attrelid AND o.deptype = 'a'
                     WHERE u.classid = 'pg_attrdef'::regclass AND u.objid = d.oid
                       AND u.refclassid = 'pg_class'::regclass) AS owned_sequence_default
       FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_collation co ON co.oid = a.attcollation
       LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       LEFT JOIN pg_constraint nn ON nn.conrelid = a.attrelid AND nn.contype = 'n' AND nn.conkey[1] = a.attnum
      WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attrelid, a.attnum`,
    [oids],
  );
  const columnsOf = new Map<string, Row[]>();
  for (const c of columns) {
    const list = columnsOf.get(String(c.rel)) ?? [];
    list.push(c);
    columnsOf.set(String(c.rel), list);
  }
  const constraints = await rows(
    client,
    `SELECT k.oid, k.conrelid AS rel, k.contype AS kind, k.conname AS name, quote_ident(k.conname) AS ident,
            pg_get_constraintdef(k.oid) AS def, k.convalidated AS valid, k.conislocal AS local,
            'pg_class:' || k.conindid AS index_key, ix.indisclustered AS clustered,
            ix.indisreplident AS replica_identity
       FROM pg_constraint k
       JOIN pg_class r ON r.oid = k.conrelid
       -- A foreign key's conindid is the referenced table's index.
       LEFT JOIN pg_index ix ON ix.indexrelid = k.conindid AND k.contype IN ('p', 'u', 'x')
      WHERE k.conrelid = ANY($1::oid[]) AND k.contype IN ('p', 'u', 'x', 'c', 'f')
        -- A partition is made on its own, then attached: with its keys (attached to its parent's
        -- indexes) and its parent's checks; not its parent's foreign keys, which the parent's make.
        AND (k.conparentid = 0 OR k.contype IN ('p', 'u', 'x'))
        AND (k.conislocal OR r.relispartition)
      ORDER BY k.conrelid, k.conname`,
    [oids],
  );

  const entries: Entry[] = [];
  for (const r of found) {
    const rel = rels.get(String(r.oid)) as Relation;
    const cols = columnsOf.get(String(r.oid)) ?? [];
    const keys = [`pg_class:${rel.oid}`, `pg_type:${r.reltype}`, `pg_type:${r.typarray}`];
    const base = { rank: RANK.relation, schema: rel.schema, owner: rel.owner };
    const comments = columnComments(
      rel.oid,
      rel.qname,
      rel.ident,
      cols.map((c) => `${c.num}:${str(c.ident)}`),
    );
    const ownerSql = `ALTER ${str(r.owner_kind)} ${rel.qname} OWNER TO ${rel.ownerIdent};`;
    const parts: RelationParts = { row: r, rel, keys, base, comments, ownerSql };
    if (rel.kind === "S") entries.push(...sequenceEntries(parts));
    else if (rel.kind === "v" || rel.kind === "m") entries.push(viewEntry(parts));
    else entries.push(...tableEntries(parts, cols, constraints, serverVersion));
  }
  entries.push(...(await tableChildren(client, rels, oids)));
  entries.push(...(await publications(client, rels, serverVersion)));
  return entries;
}

/** A view's or materialized view's CREATE, with its options and check option. */
function viewEntry(parts: RelationParts): Entry {
  const { row: r, rel, keys, base, comments, ownerSql } = parts;
  const options = strs(r.options).filter((o) => !o.startsWith("check_option="));
  const check = strs(r.options).find((o) => o.startsWith("check_option="));
  const body = str(r.view).trimEnd().replace(/;$/, "");
  const materialized = rel.kind === "m";
  const type = materialized ? "MATERIALIZED VIEW" : "VIEW";
  let sql = `CREATE ${type} ${rel.qname}${withOptions(options)} AS\n${body}`;
  if (check) sql += `\n  WITH ${check.slice("check_option=".length).toUpperCase()} CHECK OPTION`;
  if (materialized) sql += "\n  WITH NO DATA";
  return {
    ...base,
    keys: [...keys, str(r.view_rule)],
    type,
    name: rel.name,
    sql: `${sql};`,
    ownerSql,
    ...(materialized ? { storage: { accessMethod: r.access_method as string | null } } : {}),
    comments: [
      { key: `pg_class:${rel.oid}:0`, sql: `${type} ${rel.qname}`, tag: `${type} ${rel.ident}` },
      ...comments,
    ],
  };
}
