import type { PgClient } from "../../../platform/pg.js";
import {
  type Entry,
  literal,
  notInExtension,
  type Quote,
  RANK,
  type Row,
  rows,
  str,
  strs,
  userSchema,
} from "./entries.js";

/** The schema dump's functions and procedures (as pg_dump's dumpFunc writes them) and aggregates, with owner and comment. */

/** Functions, procedures and window functions (not an extension's, not a range type's constructors). */
export async function functions(client: PgClient, quote: Quote): Promise<Entry[]> {
  const found = await rows(
    client,
    `SELECT p.oid, n.nspname AS schema, quote_ident(p.proname) || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS tag,
            p.proname || '(' || coalesce((SELECT string_agg(format_type(t, NULL), ', ' ORDER BY i)
                                            FROM unnest(p.proargtypes) WITH ORDINALITY AS a(t, i)), '') || ')' AS name,
            format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) AS signature,
            format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_arguments(p.oid)) AS full_signature,
            p.prokind AS kind, pg_get_function_result(p.oid) AS result, quote_ident(l.lanname) AS language,
            l.lanname IN ('internal', 'c') AS builtin_language, p.provolatile AS volatile, p.proisstrict AS strict,
            p.prosecdef AS security_definer, p.proleakproof AS leakproof, p.procost::text AS cost,
            p.proretset AS returns_set, p.prorows::text AS rows,
            CASE WHEN p.prosupport <> 0 THEN p.prosupport::regproc::text END AS support, p.proparallel AS parallel,
            p.proconfig AS config, pg_get_function_sqlbody(p.oid) AS body, p.prosrc AS source, p.probin AS binary,
            pg_get_userbyid(p.proowner) AS owner, quote_ident(pg_get_userbyid(p.proowner)) AS owner_ident
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
      WHERE ${userSchema("n")} AND p.prokind IN ('f', 'p', 'w') AND ${notInExtension("pg_proc", "p.oid")}
        -- A range type's constructors come with its CREATE TYPE.
        AND NOT EXISTS (SELECT 1 FROM pg_depend i WHERE i.classid = 'pg_proc'::regclass AND i.objid = p.oid
                          AND i.deptype = 'i')`,
  );
  return found.map((r) => {
    const keyword = r.kind === "p" ? "PROCEDURE" : "FUNCTION";
    return {
      keys: [`pg_proc:${r.oid}`],
      rank: RANK.function,
      type: keyword,
      schema: str(r.schema),
      name: str(r.name),
      owner: str(r.owner),
      sql: createFunction(keyword, r, quote),
      ownerSql: `ALTER ${keyword} ${str(r.signature)} OWNER TO ${str(r.owner_ident)};`,
      comments: [
        {
          key: `pg_proc:${r.oid}:0`,
          sql: `${keyword} ${str(r.signature)}`,
          tag: `${keyword} ${str(r.tag)}`,
        },
      ],
    };
  });
}

/** Aggregates, as pg_dump writes CREATE AGGREGATE (its clauses in its order, each only when set). */
export async function aggregates(client: PgClient): Promise<Entry[]> {
  const found = await rows(
    client,
    `SELECT p.oid, n.nspname AS schema, format('%I.%I', n.nspname, p.proname) AS qname, p.proname AS name, quote_ident(p.proname) AS ident,
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
    const types = `(${r.types === null ? "*" : str(r.types)})`;
    return {
      keys: [`pg_proc:${r.oid}`],
      rank: RANK.aggregate,
      type: "AGGREGATE",
      schema: str(r.schema),
      name: `${str(r.name)}${types}`,
      owner: str(r.owner),
      sql: `CREATE AGGREGATE ${str(r.qname)}(${star(r.args)}) (\n${aggregateClauses(r).join(",\n")}\n);`,
      ownerSql: `ALTER AGGREGATE ${signature} OWNER TO ${str(r.owner_ident)};`,
      comments: [
        {
          key: `pg_proc:${r.oid}:0`,
          sql: `AGGREGATE ${signature}`,
          tag: `AGGREGATE ${str(r.ident)}${types}`,
        },
      ],
    };
  });
}

const VOLATILITY: Record<string, string> = { i: " IMMUTABLE", s: " STABLE" };
const FUNCTION_PARALLEL: Record<string, string> = { s: " PARALLEL SAFE", r: " PARALLEL RESTRICTED" };
/** Settings whose value is a list (GUC_LIST_QUOTE): SET … TO gives each item as a literal of its own. */
const LIST_SETTINGS = new Set([
  "local_preload_libraries",
  "search_path",
  "session_preload_libraries",
  "shared_preload_libraries",
  "temp_tablespaces",
  "unix_socket_directories",
]);

/** CREATE FUNCTION or PROCEDURE as pg_dump's dumpFunc writes it: each attribute only when not the default. */
function createFunction(keyword: string, r: Row, quote: Quote): string {
  let sql = `CREATE ${keyword} ${str(r.full_signature)}`;
  if (r.kind !== "p") sql += ` RETURNS ${str(r.result)}`;
  sql += `\n    LANGUAGE ${str(r.language)}`;
  if (r.kind === "w") sql += " WINDOW";
  sql += VOLATILITY[str(r.volatile)] ?? "";
  if (r.strict) sql += " STRICT";
  if (r.security_definer) sql += " SECURITY DEFINER";
  if (r.leakproof) sql += " LEAKPROOF";
  const cost = str(r.cost);
  if (cost !== "0" && cost !== (r.builtin_language ? "1" : "100")) sql += ` COST ${cost}`;
  if (r.returns_set && r.rows !== "0" && r.rows !== "1000") sql += ` ROWS ${str(r.rows)}`;
  if (r.support !== null) sql += ` SUPPORT ${str(r.support)}`;
  sql += FUNCTION_PARALLEL[str(r.parallel)] ?? "";
  for (const item of strs(r.config)) {
    const eq = item.indexOf("=");
    if (eq < 0) continue;
    const name = item.slice(0, eq);
    const value = item.slice(eq + 1);
    const values = LIST_SETTINGS.has(name) ? splitSettingList(value) : [value];
    sql += `\n    SET ${quote(name)} TO ${values.map(literal).join(", ")}`;
  }
  let body: string;
  if (r.body !== null) body = str(r.body);
  else if (r.binary !== null && r.binary !== "" && r.binary !== "-") {
    const source = str(r.source);
    body = `AS ${literal(str(r.binary))}`;
    if (source !== "") body += `, ${/['\\]/.test(source) ? dollarQuoted(source) : literal(source)}`;
  } else body = `AS ${dollarQuoted(str(r.source))}`;
  return `${sql}\n    ${body};`;
}

/** pg_dump's appendStringLiteralDQ: `$$…$$`, its tag grown from "_XXXXXXX" until the text does not hold it. */
function dollarQuoted(text: string): string {
  const suffixes = "_XXXXXXX";
  let tag = "$";
  for (let next = 0; text.includes(tag); next = (next + 1) % suffixes.length) tag += suffixes[next];
  return `${tag}$${text}${tag}$`;
}

/** A list setting's value as proconfig holds it (`"$user", public`), split into its items (SplitGUCList). */
function splitSettingList(value: string): string[] {
  const items: string[] = [];
  let i = 0;
  const space = () => {
    while (i < value.length && /\s/.test(value[i] as string)) i++;
  };
  space();
  while (i < value.length) {
    let item = "";
    if (value[i] === '"') {
      i++;
      while (i < value.length && !(value[i] === '"' && value[i + 1] !== '"')) {
        if (value[i] === '"') i++;
        item += value[i++];
      }
      i++;
    } else while (i < value.length && value[i] !== "," && !/\s/.test(value[i] as string)) item += value[i++];
    items.push(item);
    space();
    if (value[i] === ",") i++;
    space();
  }
  return items;
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
