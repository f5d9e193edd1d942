import type { PgClient } from "../../../platform/pg.js";
import {
  type CommentTarget,
  columnComments,
  type Entry,
  literal,
  notInExtension,
  RANK,
  rows,
  str,
  strs,
  userSchema,
} from "./entries.js";

/**
 * The schema dump's first entries: schemas, extensions, and the user-defined types (enums,
 * composite types, domains, ranges), from the catalogs.
 */

/**
 * Schemas. `public`, which every database has, is not created: pg_dump writes only its owner, when
 * it is not the default (pg_database_owner; before Postgres 15 the bootstrap superuser), and its
 * privileges.
 */
export async function schemas(client: PgClient): Promise<Entry[]> {
  const found = await rows(
    client,
    `SELECT n.oid, n.nspname AS name, quote_ident(n.nspname) AS ident, pg_get_userbyid(n.nspowner) AS owner,
            quote_ident(pg_get_userbyid(n.nspowner)) AS owner_ident, n.nspname = 'public' AS public,
            n.nspowner = CASE WHEN current_setting('server_version_num')::int >= 150000
                              THEN 'pg_database_owner'::regrole ELSE 10 END AS default_owner
       FROM pg_namespace n
      WHERE ${userSchema("n")} AND ${notInExtension("pg_namespace", "n.oid")}`,
  );
  return found.map((r) => ({
    keys: [`pg_namespace:${r.oid}`],
    rank: RANK.schema,
    type: "SCHEMA",
    schema: "-",
    name: str(r.name),
    owner: str(r.owner),
    sql: r.public ? "-- *not* creating schema, since initdb creates it" : `CREATE SCHEMA ${str(r.ident)};`,
    ...(r.public && r.default_owner ? { aclOnly: true } : {}),
    ownerSql: `ALTER SCHEMA ${str(r.ident)} OWNER TO ${str(r.owner_ident)};`,
    comments: [
      { key: `pg_namespace:${r.oid}:0`, sql: `SCHEMA ${str(r.ident)}`, tag: `SCHEMA ${str(r.ident)}` },
    ],
  }));
}

/**
 * Collations, as pg_dump's dumpCollation writes them: the provider, determinism, and the locale
 * (or, for libc, lc_collate and lc_ctype when they differ); never the version, which the server
 * computes when it makes the collation again.
 */
export async function collations(client: PgClient): Promise<Entry[]> {
  const found = await rows(
    client,
    `SELECT c.oid, n.nspname AS schema, c.collname AS name, quote_ident(c.collname) AS ident,
            format('%I.%I', n.nspname, c.collname) AS qname, c.collprovider AS provider,
            c.collisdeterministic AS deterministic, c.collcollate AS collate, c.collctype AS ctype,
            -- The ICU (or builtin) locale's column was colliculocale in 15 and 16, colllocale from 17.
            coalesce(to_jsonb(c) ->> 'colllocale', to_jsonb(c) ->> 'colliculocale') AS locale,
            to_jsonb(c) ->> 'collicurules' AS rules,
            pg_get_userbyid(c.collowner) AS owner, quote_ident(pg_get_userbyid(c.collowner)) AS owner_ident
       FROM pg_collation c JOIN pg_namespace n ON n.oid = c.collnamespace
      WHERE ${userSchema("n")} AND ${notInExtension("pg_collation", "c.oid")}`,
  );
  return found.map((r) => {
    const provider = COLLATION_PROVIDERS[str(r.provider)] ?? "default";
    let sql = `CREATE COLLATION ${str(r.qname)} (provider = ${provider}`;
    if (!r.deterministic) sql += ", deterministic = false";
    if (provider === "libc")
      sql +=
        r.collate === r.ctype
          ? `, locale = ${literal(str(r.collate))}`
          : `, lc_collate = ${literal(str(r.collate))}, lc_ctype = ${literal(str(r.ctype))}`;
    else {
      // Before 15 an ICU collation's locale was its collcollate.
      const locale = r.locale ?? r.collate;
      if (locale !== null && locale !== "") sql += `, locale = ${literal(str(locale))}`;
      if (r.rules !== null && r.rules !== "") sql += `, rules = ${literal(str(r.rules))}`;
    }
    return {
      keys: [`pg_collation:${r.oid}`],
      rank: RANK.collation,
      type: "COLLATION",
      schema: str(r.schema),
      name: str(r.name),
      owner: str(r.owner),
      sql: `${sql});`,
      ownerSql: `ALTER COLLATION ${str(r.qname)} OWNER TO ${str(r.owner_ident)};`,
      comments: [
        {
          key: `pg_collation:${r.oid}:0`,
          sql: `COLLATION ${str(r.qname)}`,
          tag: `COLLATION ${str(r.ident)}`,
        },
      ],
    };
  });
}

const COLLATION_PROVIDERS: Record<string, string> = { b: "builtin", c: "libc", i: "icu" };

export async function extensions(client: PgClient): Promise<Entry[]> {
  // Extensions initdb made (plpgsql) are every database's; pg_dump leaves them out too.
  const found = await rows(
    client,
    `SELECT x.oid, x.extname AS name, quote_ident(x.extname) AS ident, quote_ident(n.nspname) AS schema_ident
       FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
      WHERE x.oid >= 16384`,
  );
  return found.map((r) => ({
    keys: [`pg_extension:${r.oid}`],
    rank: RANK.extension,
    type: "EXTENSION",
    schema: "-",
    name: str(r.name),
    owner: "-",
    sql: `CREATE EXTENSION IF NOT EXISTS ${str(r.ident)} WITH SCHEMA ${str(r.schema_ident)};`,
    comments: [
      { key: `pg_extension:${r.oid}:0`, sql: `EXTENSION ${str(r.ident)}`, tag: `EXTENSION ${str(r.ident)}` },
    ],
  }));
}

/** Enums, composite types, domains and ranges (base types need C code, which only extensions bring). */
export async function types(client: PgClient): Promise<Entry[]> {
  const found = await rows(
    client,
    `SELECT t.oid, t.typtype AS kind, n.nspname AS schema, t.typname AS name, quote_ident(t.typname) AS ident,
            format('%I.%I', n.nspname, t.typname) AS qname, t.typarray, t.typrelid,
            pg_get_userbyid(t.typowner) AS owner, quote_ident(pg_get_userbyid(t.typowner)) AS owner_ident,
            (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid) AS labels,
            (SELECT array_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                      || CASE WHEN a.attcollation <> at.typcollation
                              THEN ' COLLATE ' || format('%I.%I', cn.nspname, co.collname) ELSE '' END
                      ORDER BY a.attnum)
               FROM pg_attribute a JOIN pg_type at ON at.oid = a.atttypid
               LEFT JOIN pg_collation co ON co.oid = a.attcollation
               LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
              WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) AS attributes,
            (SELECT array_agg(a.attnum || ':' || quote_ident(a.attname) ORDER BY a.attnum)
               FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            format_type(t.typbasetype, t.typtypmod) AS base,
            CASE WHEN t.typtype = 'd' AND t.typcollation <> bt.typcollation
                 THEN format('%I.%I', dn.nspname, dc.collname) END AS collation,
            pg_get_expr(t.typdefaultbin, 0) AS default, t.typnotnull AS notnull,
            (SELECT array_agg(format('CONSTRAINT %I ', k.conname) || pg_get_constraintdef(k.oid) ORDER BY k.conname)
               FROM pg_constraint k WHERE k.contypid = t.oid AND k.contype = 'c') AS checks,
            (SELECT array_agg('pg_constraint:' || k.oid) FROM pg_constraint k WHERE k.contypid = t.oid) AS check_keys,
            format_type(r.rngsubtype, NULL) AS subtype, format_type(r.rngmultitypid, NULL) AS multirange,
            CASE WHEN r.rngsubdiff <> 0 THEN r.rngsubdiff::regproc::text END AS subdiff
       FROM pg_type t
       JOIN pg_namespace n ON n.oid = t.typnamespace
       LEFT JOIN pg_class c ON c.oid = t.typrelid
       LEFT JOIN pg_type bt ON bt.oid = t.typbasetype
       LEFT JOIN pg_collation dc ON dc.oid = t.typcollation
       LEFT JOIN pg_namespace dn ON dn.oid = dc.collnamespace
       LEFT JOIN pg_range r ON r.rngtypid = t.oid
      WHERE ${userSchema("n")} AND ${notInExtension("pg_type", "t.oid")}
        AND (t.typtype IN ('e', 'd', 'r') OR (t.typtype = 'c' AND c.relkind = 'c'))`,
  );
  return found.map((r) => {
    const qname = str(r.qname);
    const domain = r.kind === "d";
    let sql: string;
    if (r.kind === "e")
      sql = `CREATE TYPE ${qname} AS ENUM (\n${strs(r.labels)
        .map((l) => `    ${literal(l)}`)
        .join(",\n")}\n);`;
    else if (r.kind === "c")
      sql = `CREATE TYPE ${qname} AS (\n${strs(r.attributes)
        .map((a) => `\t${a}`)
        .join(",\n")}\n);`;
    else if (r.kind === "r") {
      const options = [`    subtype = ${str(r.subtype)}`];
      if (r.multirange) options.push(`    multirange_type_name = ${str(r.multirange)}`);
      if (r.subdiff) options.push(`    subtype_diff = ${str(r.subdiff)}`);
      sql = `CREATE TYPE ${qname} AS RANGE (\n${options.join(",\n")}\n);`;
    } else {
      sql = `CREATE DOMAIN ${qname} AS ${str(r.base)}`;
      if (r.collation) sql += ` COLLATE ${str(r.collation)}`;
      if (r.notnull) sql += " NOT NULL";
      if (r.default !== null) sql += ` DEFAULT ${str(r.default)}`;
      for (const check of strs(r.checks)) sql += `\n\t${check}`;
      sql += ";";
    }
    const keyword = domain ? "DOMAIN" : "TYPE";
    const comments: CommentTarget[] = [
      { key: `pg_type:${r.oid}:0`, sql: `${keyword} ${qname}`, tag: `${keyword} ${str(r.ident)}` },
    ];
    if (r.kind === "c") comments.push(...columnComments(r.typrelid, qname, str(r.ident), strs(r.columns)));
    return {
      keys: [`pg_type:${r.oid}`, `pg_type:${r.typarray}`, `pg_class:${r.typrelid}`, ...strs(r.check_keys)],
      rank: RANK.type,
      type: keyword,
      schema: str(r.schema),
      name: str(r.name),
      owner: str(r.owner),
      sql,
      ownerSql: `ALTER ${keyword} ${qname} OWNER TO ${str(r.owner_ident)};`,
      comments,
    };
  });
}
