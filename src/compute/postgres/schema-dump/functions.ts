import type { PgClient } from "../../../platform/pg.js";
import { type Entry, literal, notInExtension, RANK, type Row, rows, str, userSchema } from "./entries.js";

/** The schema dump's functions and procedures (pg_get_functiondef's text) and aggregates, with owner and comment. */

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

/** Aggregates, as pg_dump writes CREATE AGGREGATE (its clauses in its order, each only when set). */
export async function aggregates(client: PgClient): Promise<Entry[]> {
  const found = await rows(
    client,
    `SELECT p.oid, n.nspname AS schema, format('%I.%I', n.nspname, p.proname) AS qname, p.proname AS name,
            pg_get_function_arguments(p.oid) AS args, pg_get_function_identity_arguments(p.oid) AS identity_args,
            (SELECT string_agg(format_type(t, NULL), ', ' ORDER BY i)
               FROM unnest(p.proargtypes) WITH ORDINALITY AS a(t, i)) AS types,
            a.aggkind AS kind, a.aggtransfn::regproc::text AS sfunc, a.aggtranstype::regtype::text AS stype,
            a.aggtransspace AS sspace, a.agginitval AS initcond,
            a.aggfinalfn::regproc::text AS finalfunc, a.aggfinalextra AS finalextra, a.aggfinalmodify AS finalmodify,
            a.aggcombinefn::regproc::text AS combinefunc, a.aggserialfn::regproc::text AS serialfunc,
            a.aggdeserialfn::regproc::text AS deserialfunc,
            a.aggmtransfn::regproc::text AS msfunc, a.aggminvtransfn::regproc::text AS minvfunc,
            a.aggmtranstype::regtype::text AS mstype, a.aggmtransspace AS msspace, a.aggminitval AS minitcond,
            a.aggmfinalfn::regproc::text AS mfinalfunc, a.aggmfinalextra AS mfinalextra,
            a.aggmfinalmodify AS mfinalmodify,
            CASE WHEN a.aggsortop <> 0 THEN format('OPERATOR(%I.%s)', opn.nspname, o.oprname) END AS sortop,
            p.proparallel AS parallel,
            pg_get_userbyid(p.proowner) AS owner, quote_ident(pg_get_userbyid(p.proowner)) AS owner_ident
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       JOIN pg_aggregate a ON a.aggfnoid = p.oid
       LEFT JOIN pg_operator o ON o.oid = a.aggsortop
       LEFT JOIN pg_namespace opn ON opn.oid = o.oprnamespace
      WHERE ${userSchema("n")} AND p.prokind = 'a' AND ${notInExtension("pg_proc", "p.oid")}`,
  );
  return found.map((r) => {
    const star = (args: unknown) => (str(args) === "" ? "*" : str(args));
    const signature = `${str(r.qname)}(${star(r.identity_args)})`;
    const tag = `${str(r.name)}(${r.types === null ? "*" : str(r.types)})`;
    return {
      keys: [`pg_proc:${r.oid}`],
      rank: RANK.aggregate,
      type: "AGGREGATE",
      schema: str(r.schema),
      name: tag,
      owner: str(r.owner),
      sql: `CREATE AGGREGATE ${str(r.qname)}(${star(r.args)}) (\n${aggregateClauses(r).join(",\n")}\n);`,
      ownerSql: `ALTER AGGREGATE ${signature} OWNER TO ${str(r.owner_ident)};`,
      comments: [{ key: `pg_proc:${r.oid}:0`, sql: `AGGREGATE ${signature}`, tag: `AGGREGATE ${tag}` }],
    };
  });
}

const MODIFY: Record<string, string> = { r: "READ_ONLY", s: "SHAREABLE", w: "READ_WRITE" };
const PARALLEL: Record<string, string> = { s: "safe", r: "restricted" };

/** CREATE AGGREGATE's clauses, as pg_dump's dumpAgg lists them ("-" is a function or type not set). */
function aggregateClauses(r: Row): string[] {
  const set = (v: unknown) => v !== null && v !== "-";
  // A final function that changes the state is what an ordered-set aggregate's has by default.
  const defaultModify = r.kind === "n" ? "r" : "w";
  const clauses = [`    SFUNC = ${str(r.sfunc)}`, `    STYPE = ${str(r.stype)}`];
  if (Number(r.sspace) !== 0) clauses.push(`    SSPACE = ${String(r.sspace)}`);
  if (r.initcond !== null) clauses.push(`    INITCOND = ${literal(str(r.initcond))}`);
  if (set(r.finalfunc)) {
    clauses.push(`    FINALFUNC = ${str(r.finalfunc)}`);
    if (r.finalextra) clauses.push("    FINALFUNC_EXTRA");
    if (r.finalmodify !== defaultModify) clauses.push(`    FINALFUNC_MODIFY = ${MODIFY[str(r.finalmodify)]}`);
  }
  if (set(r.combinefunc)) clauses.push(`    COMBINEFUNC = ${str(r.combinefunc)}`);
  if (set(r.serialfunc)) clauses.push(`    SERIALFUNC = ${str(r.serialfunc)}`);
  if (set(r.deserialfunc)) clauses.push(`    DESERIALFUNC = ${str(r.deserialfunc)}`);
  if (set(r.msfunc))
    clauses.push(
      `    MSFUNC = ${str(r.msfunc)}`,
      `    MINVFUNC = ${str(r.minvfunc)}`,
      `    MSTYPE = ${str(r.mstype)}`,
    );
  if (Number(r.msspace) !== 0) clauses.push(`    MSSPACE = ${String(r.msspace)}`);
  if (r.minitcond !== null) clauses.push(`    MINITCOND = ${literal(str(r.minitcond))}`);
  if (set(r.mfinalfunc)) {
    clauses.push(`    MFINALFUNC = ${str(r.mfinalfunc)}`);
    if (r.mfinalextra) clauses.push("    MFINALFUNC_EXTRA");
    if (r.mfinalmodify !== defaultModify)
      clauses.push(`    MFINALFUNC_MODIFY = ${MODIFY[str(r.mfinalmodify)]}`);
  }
  if (r.sortop !== null) clauses.push(`    SORTOP = ${str(r.sortop)}`);
  if (r.kind === "h") clauses.push("    HYPOTHETICAL");
  const parallel = PARALLEL[str(r.parallel)];
  if (parallel) clauses.push(`    PARALLEL = ${parallel}`);
  return clauses;
}
