import { type Entry, type RelationParts, type Row, str } from "./entries.js";

/**
 * The schema dump's sequences: CREATE SEQUENCE with its options as pg_dump lists them, ALTER
 * SEQUENCE … OWNED BY for a serial column's, and ADD GENERATED … AS IDENTITY for an identity
 * column's.
 */

const SEQUENCE_BOUNDS: Record<string, [bigint, bigint]> = {
  smallint: [-32768n, 32767n],
  integer: [-2147483648n, 2147483647n],
  bigint: [-9223372036854775808n, 9223372036854775807n],
};

/** A sequence's options as pg_dump lists them (NO MINVALUE/NO MAXVALUE where they are the defaults). */
function sequenceOptions(r: Row, withType: boolean): string[] {
  const type = str(r.seq_type);
  const options: string[] = [];
  if (withType && type !== "bigint") options.push(`AS ${type}`);
  options.push(`START WITH ${str(r.seq_start)}`, `INCREMENT BY ${str(r.seq_increment)}`);
  const [low, high] = SEQUENCE_BOUNDS[type] ?? (SEQUENCE_BOUNDS.bigint as [bigint, bigint]);
  const ascending = BigInt(str(r.seq_increment)) > 0n;
  options.push(
    BigInt(str(r.seq_min)) === (ascending ? 1n : low) ? "NO MINVALUE" : `MINVALUE ${str(r.seq_min)}`,
  );
  options.push(
    BigInt(str(r.seq_max)) === (ascending ? high : -1n) ? "NO MAXVALUE" : `MAXVALUE ${str(r.seq_max)}`,
  );
  options.push(`CACHE ${str(r.seq_cache)}`);
  if (r.seq_cycle) options.push("CYCLE");
  return options;
}

/** A sequence's entries: its CREATE SEQUENCE (or identity) and, for a serial's, its OWNED BY. */
export function sequenceEntries(parts: RelationParts): Entry[] {
  const { row: r, rel, keys, base, ownerSql } = parts;
  const entries: Entry[] = [];
  const options = sequenceOptions(r, r.owned_kind !== "i");
  if (r.owned_kind === "i") {
    const always = r.identity === "a" ? "ALWAYS" : "BY DEFAULT";
    entries.push({
      ...base,
      keys,
      type: "SEQUENCE",
      name: rel.name,
      sql: `ALTER TABLE ${str(r.owned_table_qname)} ALTER COLUMN ${str(r.owned_column)} ADD GENERATED ${always} AS IDENTITY (\n    SEQUENCE NAME ${rel.qname}\n${options.map((o) => `    ${o}`).join("\n")}\n);`,
      after: [str(r.owned_table)],
      comments: [
        { key: `pg_class:${rel.oid}:0`, sql: `SEQUENCE ${rel.qname}`, tag: `SEQUENCE ${rel.ident}` },
      ],
    });
    return entries;
  }
  const unlogged = r.unlogged ? "UNLOGGED " : "";
  entries.push({
    ...base,
    keys,
    type: "SEQUENCE",
    name: rel.name,
    sql: `CREATE ${unlogged}SEQUENCE ${rel.qname}\n${options.map((o) => `    ${o}`).join("\n")};`,
    ownerSql,
    comments: [{ key: `pg_class:${rel.oid}:0`, sql: `SEQUENCE ${rel.qname}`, tag: `SEQUENCE ${rel.ident}` }],
  });
  if (r.owned_kind === "a")
    entries.push({
      ...base,
      keys: [],
      type: "SEQUENCE OWNED BY",
      name: rel.name,
      sql: `ALTER SEQUENCE ${rel.qname} OWNED BY ${str(r.owned_table_qname)}.${str(r.owned_column)};`,
      after: [`pg_class:${rel.oid}`, str(r.owned_table)],
    });
  return entries;
}
