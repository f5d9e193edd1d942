import {
  type CommentTarget,
  type Entry,
  indexSettings,
  RANK,
  type Relation,
  type RelationParts,
  type Row,
  str,
  strs,
  withOptions,
} from "./entries.js";

/**
 * The schema dump's tables: CREATE TABLE (plain, inheriting, partitioned, partitions) with columns
 * and valid checks inline, then the defaults and constraints pg_dump adds with ALTER TABLE. A
 * partition is made as a table of its own (every column, its parent's checks too) and attached to
 * its parent after every table, as pg_dump does (a TABLE ATTACH entry).
 */

/** A table's entries: its CREATE TABLE, its attachment, serial columns' defaults, and its other constraints. */
export function tableEntries(
  parts: RelationParts,
  cols: Row[],
  constraints: Row[],
  serverVersion: number,
): Entry[] {
  const { row: r, rel, keys, base, comments, ownerSql } = parts;
  const kind = rel.kind === "f" ? "FOREIGN TABLE" : "TABLE";
  const entries: Entry[] = [];
  const partition = r.bound !== null;
  const own = constraints.filter((k) => String(k.rel) === String(r.oid));
  const inlineChecks = own.filter((k) => k.kind === "c" && k.valid);
  const lines: string[] = [];
  // A serial's default names a sequence made after the table; an inherited column is not written
  // in CREATE TABLE: each default is set with an ALTER TABLE of its own.
  const separateDefault = (c: Row) => c.owned_sequence_default || (!partition && !c.local);
  for (const c of cols) {
    if (!partition && !c.local) continue;
    let line = `    ${str(c.ident)} ${str(c.type)}`;
    if (c.generated === "s") line += ` GENERATED ALWAYS AS (${str(c.default)}) STORED`;
    else if (c.generated === "v") line += ` GENERATED ALWAYS AS (${str(c.default)})`;
    else if (c.default !== null && !separateDefault(c)) line += ` DEFAULT ${str(c.default)}`;
    if (c.notnull) {
      // A name other than the one Postgres would choose is written out (pg_dump 18).
      if (c.notnull_name !== null && c.notnull_name !== `${rel.name}_${str(c.name)}_not_null`)
        line += ` CONSTRAINT ${str(c.notnull_ident)}`;
      line += " NOT NULL";
      if (c.notnull_noinherit) line += " NO INHERIT";
    }
    if (c.collation) line += ` COLLATE ${str(c.collation)}`;
    lines.push(line);
  }
  for (const k of inlineChecks) lines.push(`    CONSTRAINT ${str(k.ident)} ${str(k.def)}`);
  const unlogged = r.unlogged ? "UNLOGGED " : "";
  let sql = `CREATE ${unlogged}${kind} ${rel.qname} (\n${lines.join(",\n")}${lines.length > 0 ? "\n" : ""})`;
  if (!partition && strs(r.parents).length > 0) sql += `\nINHERITS (${strs(r.parents).join(", ")})`;
  if (r.partition_key) sql += `\nPARTITION BY ${str(r.partition_key)}`;
  if (r.foreign_server) sql += `\nSERVER ${str(r.foreign_server)}`;
  sql += withOptions(strs(r.options)).replace(/^ /, "\n");
  if (r.foreign_options) sql += `\nOPTIONS (\n    ${str(r.foreign_options)}\n)`;
  sql += ";";
  for (const line of columnSettings(rel, cols, serverVersion)) sql += `\n${line}`;
  // A foreign table has none (its catalog row says NOTHING).
  const identity = rel.kind === "f" ? undefined : REPLICA_IDENTITY[str(r.replica_identity)];
  if (identity) sql += `\n\nALTER TABLE ONLY ${rel.qname} REPLICA IDENTITY ${identity};`;
  if (r.force_rls) sql += `\n\nALTER TABLE ONLY ${rel.qname} FORCE ROW LEVEL SECURITY;`;
  entries.push({
    ...base,
    keys: [
      ...keys,
      ...cols.filter((c) => !separateDefault(c)).map((c) => `pg_attrdef:${c.default_oid}`),
      ...inlineChecks.map((k) => `pg_constraint:${k.oid}`),
    ],
    type: kind,
    name: rel.name,
    sql,
    ownerSql,
    ...(rel.kind === "f" ? {} : { storage: { accessMethod: r.access_method as string | null } }),
    after: strs(r.parent_keys),
    comments: [
      { key: `pg_class:${rel.oid}:0`, sql: `${kind} ${rel.qname}`, tag: `${kind} ${rel.ident}` },
      ...comments,
      ...inlineChecks.map((k) => constraintComment(k, rel)),
    ],
  });
  if (partition)
    entries.push({
      ...base,
      keys: [],
      rank: RANK.tableAttach,
      type: "TABLE ATTACH",
      name: rel.name,
      sql: `ALTER TABLE ONLY ${strs(r.parents)[0]} ATTACH PARTITION ${rel.qname} ${str(r.bound)};`,
      after: [`pg_class:${rel.oid}`, ...strs(r.parent_keys)],
    });
  for (const c of cols)
    if (separateDefault(c) && c.default !== null && !c.generated)
      entries.push({
        ...base,
        keys: [`pg_attrdef:${c.default_oid}`],
        rank: RANK.default,
        type: "DEFAULT",
        name: `${rel.name} ${str(c.name)}`,
        sortName: rel.name,
        sql: `ALTER TABLE ONLY ${rel.qname} ALTER COLUMN ${str(c.ident)} SET DEFAULT ${str(c.default)};`,
        after: [`pg_class:${rel.oid}`],
      });
  for (const k of own) {
    // A partition's parent's check, NOT VALID there too: its parent's ALTER TABLE adds it.
    if (k.kind === "c" && (k.valid || !k.local)) continue;
    const foreign = k.kind === "f";
    // A partitioned table's foreign key applies to its partitions; a key is the table's own.
    const only = k.kind === "c" || (foreign && rel.kind === "p") ? "" : "ONLY ";
    entries.push({
      ...base,
      keys: [`pg_constraint:${k.oid}`, ...(foreign ? [] : [str(k.index_key)])],
      rank: foreign ? RANK.foreignKey : RANK.constraint,
      type: foreign ? "FK CONSTRAINT" : k.kind === "c" ? "CHECK CONSTRAINT" : "CONSTRAINT",
      name: `${rel.name} ${str(k.name)}`,
      sortName: str(k.name),
      sql: `ALTER ${kind} ${only}${rel.qname}\n    ADD CONSTRAINT ${str(k.ident)} ${str(k.def)};${indexSettings(rel, k)}`,
      after: [`pg_class:${rel.oid}`],
      comments: [constraintComment(k, rel)],
    });
  }
  return entries;
}

/** REPLICA IDENTITY a table's own entry sets (an index's is set with the index). */
const REPLICA_IDENTITY: Record<string, string> = { n: "NOTHING", f: "FULL" };

/** The ALTER COLUMN statements pg_dump adds after CREATE TABLE, in its order for each column. */
function columnSettings(rel: Relation, cols: Row[], serverVersion: number): string[] {
  const lines: string[] = [];
  const kind = rel.kind === "f" ? "FOREIGN TABLE" : "TABLE";
  const alter = (c: Row, what: string) =>
    lines.push(`ALTER ${kind} ONLY ${rel.qname} ALTER COLUMN ${str(c.ident)} ${what};`);
  for (const c of cols) {
    if (c.stattarget !== null) alter(c, `SET STATISTICS ${String(c.stattarget)}`);
    if (c.storage !== null) alter(c, `SET STORAGE ${str(c.storage)}`);
    if (c.compression !== null) alter(c, `SET COMPRESSION ${str(c.compression)}`);
    if (c.attoptions) alter(c, `SET (${str(c.attoptions)})`);
    // pg_dump 17 writes ONLY here too.
    if (c.fdw_options)
      lines.push(
        `ALTER FOREIGN TABLE ${serverVersion >= 170000 ? "ONLY " : ""}${rel.qname} ALTER COLUMN ${str(c.ident)} OPTIONS (\n    ${str(c.fdw_options)}\n);`,
      );
  }
  return lines;
}

function constraintComment(k: Row, rel: Relation): CommentTarget {
  return {
    key: `pg_constraint:${k.oid}:0`,
    sql: `CONSTRAINT ${str(k.ident)} ON ${rel.qname}`,
    tag: `CONSTRAINT ${str(k.ident)} ON ${rel.ident}`,
  };
}
