import type { PgClient } from "../../../platform/pg.js";

/**
 * What every part of the schema dump shares: the Entry each catalog query yields (one object of
 * pg_dump's table of contents), the COMMENT ON targets hanging off it, pg_dump's order of object
 * kinds, the relation a table's parts are built from, and the small helpers the queries and the
 * statements they print use (row access, literals, reloptions, catalog filters).
 */

/** One object of the dump: an entry of pg_dump's table of contents. */
export interface Entry {
  /** The catalog objects (`pg_class:16384`) this entry creates: what dependencies name. */
  keys: string[];
  /** The kind's place in pg_dump's order; then schema and name; dependencies may move an entry later. */
  rank: number;
  type: string;
  /** The header's Schema (`-` for none). */
  schema: string;
  /** The header's Name. */
  name: string;
  /** What pg_dump sorts it by when not its header's Name (a policy's own name, not "table policy"). */
  sortName?: string;
  /** The header's Owner. */
  owner: string;
  /** The statement(s), without the final newline. */
  sql: string;
  /** pg_dump writes the statement with no final newline (ROW SECURITY's): one blank line less follows. */
  unterminated?: boolean;
  /** ALTER … OWNER TO, when the object has an owner of its own. */
  ownerSql?: string;
  /** Keys this entry follows beyond what pg_depend records (a partition its parent, say). */
  after?: string[];
  comments?: CommentTarget[];
  /**
   * A table's or materialized view's storage, which pg_dump sets before its CREATE: `tablespace`
   * (the default one: Neon has no other) and the table access method (none for a partitioned
   * table before Postgres 17 set one).
   */
  storage?: { accessMethod: string | null };
  /** Entries pg_dump writes right after this one and its comments (a server's user mappings). */
  then?: Entry[];
  /** Only its privileges are dumped, not the object itself (the public schema, when its owner is the default). */
  aclOnly?: boolean;
}

/** What a COMMENT ON names: `key` is `catalog:oid:subid`, as pg_description holds it. */
export interface CommentTarget {
  key: string;
  /** The object as COMMENT ON takes it (`TABLE public.items`). */
  sql: string;
  /** The object as the comment's header names it (`TABLE items`). */
  tag: string;
}

/** pg_dump's order of object kinds (pg_dump_sort.c), for the kinds this dump covers. */
export const RANK = {
  schema: 1,
  collation: 2,
  extension: 3,
  type: 4,
  function: 5,
  aggregate: 6,
  textSearchDictionary: 7,
  textSearchConfiguration: 8,
  foreignServer: 9,
  relation: 10,
  tableAttach: 11,
  default: 12,
  constraint: 13,
  index: 14,
  indexAttach: 15,
  statistics: 16,
  rule: 17,
  trigger: 18,
  foreignKey: 19,
  policy: 20,
  publication: 21,
  publicationTable: 22,
  publicationSchema: 23,
} as const;

/** Schemas that hold no user objects: the system's, and each session's temporary ones. */
export const userSchema = (n: string) => `${n}.nspname <> 'information_schema' AND ${n}.nspname !~ '^pg_'`;
/** Objects an extension made are created by CREATE EXTENSION, never dumped on their own. */
export const notInExtension = (catalog: string, oid: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = '${catalog}'::regclass AND e.objid = ${oid} AND e.deptype = 'e')`;

/** The comment block that opens each entry of pg_dump's plain format (its table-of-contents line). */
export const tocHeader = (name: string, type: string, schema: string, owner: string) =>
  `--\n-- Name: ${name}; Type: ${type}; Schema: ${schema}; Owner: ${owner}\n--\n\n`;

/** A string literal (the dump sets standard_conforming_strings, so only quotes are doubled). */
export const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** `k=v` reloptions as pg_dump writes them: `WITH (k='v', …)`. */
export function withOptions(options: string[]): string {
  if (options.length === 0) return "";
  const parts = options.map((o) => {
    const eq = o.indexOf("=");
    return `${o.slice(0, eq)}=${literal(o.slice(eq + 1))}`;
  });
  return ` WITH (${parts.join(", ")})`;
}

export type Row = Record<string, unknown>;

/** An identifier as pg_dump's fmtId quotes it (names the catalog queries do not quote themselves). */
export type Quote = (name: string) => string;

/** fmtId: quoted unless lower-case letters, digits and `_` (not first a digit) and no reserved word. */
export async function identQuoter(client: PgClient): Promise<Quote> {
  const reserved = new Set(
    (await rows(client, "SELECT word FROM pg_get_keywords() WHERE catcode <> 'U'")).map((r: Row) =>
      str(r.word),
    ),
  );
  return (name) =>
    /^[a-z_][a-z0-9_]*$/.test(name) && !reserved.has(name) ? name : `"${name.replaceAll('"', '""')}"`;
}
export const str = (v: unknown) => v as string;
export const strs = (v: unknown) => (v ?? []) as string[];

export async function rows(client: PgClient, sql: string, params: unknown[] = []): Promise<Row[]> {
  return (await client.query(sql, params)).rows as Row[];
}

/** COMMENT ON COLUMN targets from `attnum:ident` pairs; `ident` is the relation's (quoted) name. */
export function columnComments(
  relid: unknown,
  qname: string,
  ident: string,
  columns: string[],
): CommentTarget[] {
  return columns.map((c) => {
    const colon = c.indexOf(":");
    const column = c.slice(colon + 1);
    return {
      key: `pg_class:${relid}:${c.slice(0, colon)}`,
      sql: `COLUMN ${qname}.${column}`,
      tag: `COLUMN ${ident}.${column}`,
    };
  });
}

/** A table, view, materialized view or sequence, as the queries below need it. */
export interface Relation {
  oid: unknown;
  kind: string;
  schema: string;
  name: string;
  /** The name quoted as an identifier (what comment headers show). */
  ident: string;
  qname: string;
  owner: string;
  ownerIdent: string;
}

/** One relation's row and what every entry made from it shares. */
export interface RelationParts {
  /** The relation's row of the relations query. */
  row: Row;
  rel: Relation;
  /** The catalog objects the relation's own entry creates. */
  keys: string[];
  base: Pick<Entry, "rank" | "schema" | "owner">;
  /** COMMENT ON COLUMN targets for its columns. */
  comments: CommentTarget[];
  /** ALTER TABLE … OWNER TO for the relation. */
  ownerSql: string;
}

/**
 * What pg_dump adds after an index's or an index-backed constraint's statement: CLUSTER ON (no
 * ONLY), then REPLICA IDENTITY USING INDEX; `r` holds the index's `clustered` and `replica_identity`.
 */
export function indexSettings(rel: Relation, r: Row): string {
  let sql = "";
  if (r.clustered) sql += `\n\nALTER TABLE ${rel.qname} CLUSTER ON ${str(r.ident)};`;
  if (r.replica_identity)
    sql += `\n\nALTER TABLE ONLY ${rel.qname} REPLICA IDENTITY USING INDEX ${str(r.ident)};`;
  return sql;
}
