import type { PgClient } from "../../../platform/pg.js";
import { type Entry, indexSettings, RANK, type Relation, rows, str } from "./entries.js";

/**
 * What the schema dump hangs off tables after them: indexes (those no constraint made), the
 * attachment of a partition's indexes to its parent's, triggers, rules, row level security and
 * policies.
 */

/** Indexes (those no constraint made) and their attachments, triggers, rules, row security and policies of the tables. */
export async function tableChildren(
  client: PgClient,
  rels: Map<string, Relation>,
  oids: string[],
): Promise<Entry[]> {
  const entries: Entry[] = [];
  const on = (oid: unknown) => rels.get(String(oid)) as Relation;
  // A partitioned table's index is made on it ONLY; each partition's, on its own, is attached to it.
  for (const r of await rows(
    client,
    `SELECT i.indexrelid AS oid, i.indrelid AS rel, c.relname AS name, quote_ident(c.relname) AS ident,
            format('%I.%I', n.nspname, c.relname) AS qname, pg_get_indexdef(i.indexrelid) AS def,
            i.indisclustered AS clustered, i.indisreplident AS replica_identity
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE i.indrelid = ANY($1::oid[])
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid
                          AND k.contype IN ('p', 'u', 'x'))`,
    [oids],
  )) {
    const rel = on(r.rel);
    entries.push({
      keys: [`pg_class:${r.oid}`],
      rank: RANK.index,
      type: "INDEX",
      schema: rel.schema,
      name: str(r.name),
      owner: rel.owner,
      sql: `${str(r.def)};${indexSettings(rel, r)}`,
      after: [`pg_class:${rel.oid}`],
      comments: [{ key: `pg_class:${r.oid}:0`, sql: `INDEX ${str(r.qname)}`, tag: `INDEX ${str(r.ident)}` }],
    });
  }
  // Owned, as pg_dump has it, by the parent index's table's owner.
  for (const r of await rows(
    client,
    `SELECT h.inhrelid AS oid, h.inhparent AS parent, c.relname AS name, n.nspname AS schema,
            format('%I.%I', n.nspname, c.relname) AS qname, format('%I.%I', pn.nspname, pc.relname) AS parent_qname,
            pg_get_userbyid(pt.relowner) AS owner
       FROM pg_inherits h
       JOIN pg_class c ON c.oid = h.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_index i ON i.indexrelid = h.inhrelid
       JOIN pg_class pc ON pc.oid = h.inhparent JOIN pg_namespace pn ON pn.oid = pc.relnamespace
       JOIN pg_index pi ON pi.indexrelid = h.inhparent JOIN pg_class pt ON pt.oid = pi.indrelid
      WHERE i.indrelid = ANY($1::oid[])`,
    [oids],
  ))
    entries.push({
      keys: [],
      rank: RANK.indexAttach,
      type: "INDEX ATTACH",
      schema: str(r.schema),
      name: str(r.name),
      owner: str(r.owner),
      sql: `ALTER INDEX ${str(r.parent_qname)} ATTACH PARTITION ${str(r.qname)};`,
      after: [`pg_class:${r.oid}`, `pg_class:${r.parent}`],
    });
  // Extended statistics (CREATE STATISTICS), with a statistics target other than the default.
  for (const r of await rows(
    client,
    `SELECT s.oid, s.stxname AS name, quote_ident(s.stxname) AS ident, n.nspname AS schema,
            format('%I.%I', n.nspname, s.stxname) AS qname, pg_get_statisticsobjdef(s.oid) AS def,
            (to_jsonb(s) ->> 'stxstattarget')::int AS target,
            pg_get_userbyid(s.stxowner) AS owner, quote_ident(pg_get_userbyid(s.stxowner)) AS owner_ident
       FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace
      WHERE s.stxrelid = ANY($1::oid[])`,
    [oids],
  )) {
    let sql = `${str(r.def)};`;
    if (r.target !== null && (r.target as number) >= 0)
      sql += `\nALTER STATISTICS ${str(r.qname)} SET STATISTICS ${String(r.target)};`;
    entries.push({
      keys: [`pg_statistic_ext:${r.oid}`],
      rank: RANK.statistics,
      type: "STATISTICS",
      schema: str(r.schema),
      name: str(r.name),
      owner: str(r.owner),
      sql,
      ownerSql: `ALTER STATISTICS ${str(r.qname)} OWNER TO ${str(r.owner_ident)};`,
      comments: [
        {
          key: `pg_statistic_ext:${r.oid}:0`,
          sql: `STATISTICS ${str(r.qname)}`,
          tag: `STATISTICS ${str(r.ident)}`,
        },
      ],
    });
  }
  const ENABLE: Record<string, string> = { D: "DISABLE", R: "ENABLE REPLICA", A: "ENABLE ALWAYS" };
  for (const r of await rows(
    client,
    `SELECT t.oid, t.tgrelid AS rel, t.tgname AS name, quote_ident(t.tgname) AS ident,
            pg_get_triggerdef(t.oid) AS def, t.tgenabled AS enabled
       FROM pg_trigger t WHERE t.tgrelid = ANY($1::oid[]) AND NOT t.tgisinternal AND t.tgparentid = 0`,
    [oids],
  )) {
    const rel = on(r.rel);
    const enable = ENABLE[str(r.enabled)];
    entries.push({
      keys: [`pg_trigger:${r.oid}`],
      rank: RANK.trigger,
      type: "TRIGGER",
      schema: rel.schema,
      name: `${rel.name} ${str(r.name)}`,
      sortName: str(r.name),
      owner: rel.owner,
      sql: `${str(r.def)};${enable ? `\n\nALTER TABLE ${rel.qname} ${enable} TRIGGER ${str(r.ident)};` : ""}`,
      after: [`pg_class:${rel.oid}`],
      comments: [
        {
          key: `pg_trigger:${r.oid}:0`,
          sql: `TRIGGER ${str(r.ident)} ON ${rel.qname}`,
          tag: `TRIGGER ${str(r.ident)} ON ${rel.ident}`,
        },
      ],
    });
  }
  for (const r of await rows(
    client,
    `SELECT w.oid, w.ev_class AS rel, w.rulename AS name, quote_ident(w.rulename) AS ident, pg_get_ruledef(w.oid) AS def
       FROM pg_rewrite w WHERE w.ev_class = ANY($1::oid[]) AND w.rulename <> '_RETURN'`,
    [oids],
  )) {
    const rel = on(r.rel);
    entries.push({
      keys: [`pg_rewrite:${r.oid}`],
      rank: RANK.rule,
      type: "RULE",
      schema: rel.schema,
      name: `${rel.name} ${str(r.name)}`,
      sortName: str(r.name),
      owner: rel.owner,
      sql: str(r.def).trimEnd(),
      after: [`pg_class:${rel.oid}`],
      comments: [
        {
          key: `pg_rewrite:${r.oid}:0`,
          sql: `RULE ${str(r.ident)} ON ${rel.qname}`,
          tag: `RULE ${str(r.ident)} ON ${rel.ident}`,
        },
      ],
    });
  }
  for (const r of await rows(
    client,
    `SELECT c.oid FROM pg_class c WHERE c.oid = ANY($1::oid[]) AND c.relrowsecurity`,
    [oids],
  )) {
    const rel = on(r.oid);
    // FORCE goes with the table's own entry.
    const sql = `ALTER TABLE ${rel.qname} ENABLE ROW LEVEL SECURITY;`;
    entries.push({
      keys: [],
      rank: RANK.policy,
      type: "ROW SECURITY",
      unterminated: true,
      schema: rel.schema,
      name: rel.name,
      owner: rel.owner,
      sql,
      after: [`pg_class:${rel.oid}`],
    });
  }
  const COMMAND: Record<string, string> = { r: "SELECT", a: "INSERT", w: "UPDATE", d: "DELETE" };
  for (const r of await rows(
    client,
    `SELECT p.oid, p.polrelid AS rel, p.polname AS name, quote_ident(p.polname) AS ident,
            p.polpermissive AS permissive, p.polcmd AS command,
            (SELECT string_agg(CASE WHEN g.role = 0 THEN 'public' ELSE quote_ident(pg_get_userbyid(g.role)) END,
                               ', ' ORDER BY g.ord)
               FROM unnest(p.polroles) WITH ORDINALITY AS g(role, ord)) AS roles,
            pg_get_expr(p.polqual, p.polrelid) AS qual, pg_get_expr(p.polwithcheck, p.polrelid) AS check
       FROM pg_policy p WHERE p.polrelid = ANY($1::oid[])`,
    [oids],
  )) {
    const rel = on(r.rel);
    let sql = `CREATE POLICY ${str(r.ident)} ON ${rel.qname}`;
    if (!r.permissive) sql += " AS RESTRICTIVE";
    const command = COMMAND[str(r.command)];
    if (command) sql += ` FOR ${command}`;
    if (r.roles !== "public") sql += ` TO ${str(r.roles)}`;
    if (r.qual !== null) sql += ` USING (${str(r.qual)})`;
    if (r.check !== null) sql += ` WITH CHECK (${str(r.check)})`;
    entries.push({
      keys: [`pg_policy:${r.oid}`],
      rank: RANK.policy,
      type: "POLICY",
      schema: rel.schema,
      name: `${rel.name} ${str(r.name)}`,
      sortName: str(r.name),
      owner: rel.owner,
      sql: `${sql};`,
      after: [`pg_class:${rel.oid}`],
      comments: [
        {
          key: `pg_policy:${r.oid}:0`,
          sql: `POLICY ${str(r.ident)} ON ${rel.qname}`,
          tag: `POLICY ${str(r.ident)} ON ${rel.ident}`,
        },
      ],
    });
  }
  return entries;
}
