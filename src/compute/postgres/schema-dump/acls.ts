import type { PgClient } from "../../../platform/pg.js";
import { type Quote, rows, str, strs, tocHeader, userSchema } from "./entries.js";

/**
 * The schema dump's privileges, as pg_dump writes them (dumputils.c buildACLCommands): for each
 * object whose ACL differs from where it started (its pg_init_privs entry, or else the built-in
 * default for its kind and owner), the REVOKEs of what it lost and the GRANTs of what it gained; and
 * ALTER DEFAULT PRIVILEGES for pg_default_acl. pg_dump prints these after every other entry.
 */

/**
 * The ACL entries of every object that has any, keyed by the catalog object (`pg_class:16384`)
 * whose entry they follow: a table's own, then its columns' by column number.
 */
export async function privileges(
  client: PgClient,
  serverVersion: number,
  quote: Quote,
): Promise<Map<string, string>> {
  const found = await rows(
    client,
    `SELECT 'pg_class:' || c.oid AS key, CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS type,
            quote_ident(c.relname) AS name, NULL AS subname, n.nspname AS schema,
            pg_get_userbyid(c.relowner) AS owner, ${items("c.relacl")} AS acl,
            ${items(`coalesce(ip.initprivs, acldefault(CASE WHEN c.relkind = 'S' THEN 's'::"char" ELSE 'r'::"char" END, c.relowner))`)} AS base,
            0 AS num
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_init_privs ip ON ip.objoid = c.oid AND ip.classoid = 'pg_class'::regclass AND ip.objsubid = 0
      WHERE c.relacl IS NOT NULL AND ${userSchema("n")}
     UNION ALL
     SELECT 'pg_class:' || c.oid, 'TABLE', quote_ident(c.relname), quote_ident(a.attname), n.nspname,
            pg_get_userbyid(c.relowner), ${items("a.attacl")},
            ${items("coalesce(ip.initprivs, '{}')")}, a.attnum
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_init_privs ip ON ip.objoid = c.oid AND ip.classoid = 'pg_class'::regclass AND ip.objsubid = a.attnum
      WHERE a.attacl IS NOT NULL AND NOT a.attisdropped AND ${userSchema("n")}
     UNION ALL
     SELECT 'pg_proc:' || p.oid, CASE WHEN p.prokind = 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
            CASE WHEN p.prokind = 'a'
                 THEN quote_ident(p.proname) || '(' || coalesce((SELECT string_agg(format_type(t, NULL), ', ' ORDER BY i)
                                                     FROM unnest(p.proargtypes) WITH ORDINALITY AS g(t, i)), '*') || ')'
                 ELSE quote_ident(p.proname) || '(' || pg_get_function_identity_arguments(p.oid) || ')' END,
            NULL, n.nspname, pg_get_userbyid(p.proowner), ${items("p.proacl")},
            ${items("coalesce(ip.initprivs, acldefault('f', p.proowner))")}, 0
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       LEFT JOIN pg_init_privs ip ON ip.objoid = p.oid AND ip.classoid = 'pg_proc'::regclass AND ip.objsubid = 0
      WHERE p.proacl IS NOT NULL AND ${userSchema("n")}
     UNION ALL
     SELECT 'pg_type:' || t.oid, 'TYPE', quote_ident(t.typname), NULL, n.nspname, pg_get_userbyid(t.typowner),
            ${items("t.typacl")}, ${items("coalesce(ip.initprivs, acldefault('T', t.typowner))")}, 0
       FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
       LEFT JOIN pg_init_privs ip ON ip.objoid = t.oid AND ip.classoid = 'pg_type'::regclass AND ip.objsubid = 0
      WHERE t.typacl IS NOT NULL AND ${userSchema("n")}
     UNION ALL
     SELECT 'pg_foreign_server:' || s.oid, 'FOREIGN SERVER', quote_ident(s.srvname), NULL, NULL,
            pg_get_userbyid(s.srvowner), ${items("s.srvacl")},
            ${items("coalesce(ip.initprivs, acldefault('S', s.srvowner))")}, 0
       FROM pg_foreign_server s
       LEFT JOIN pg_init_privs ip ON ip.objoid = s.oid AND ip.classoid = 'pg_foreign_server'::regclass AND ip.objsubid = 0
      WHERE s.srvacl IS NOT NULL
     UNION ALL
     SELECT 'pg_namespace:' || n.oid, 'SCHEMA', quote_ident(n.nspname), NULL, NULL, pg_get_userbyid(n.nspowner),
            ${items("n.nspacl")}, ${items("coalesce(ip.initprivs, acldefault('n', n.nspowner))")}, 0
       FROM pg_namespace n
       LEFT JOIN pg_init_privs ip ON ip.objoid = n.oid AND ip.classoid = 'pg_namespace'::regclass AND ip.objsubid = 0
      WHERE n.nspacl IS NOT NULL AND ${userSchema("n")}
      ORDER BY key, num`,
  );
  const blocks = new Map<string, string>();
  for (const r of found) {
    // pg_dump takes the public schema to start as Postgres 15 makes it, whoever owns it now.
    const owner = aclName(str(r.owner));
    const base =
      r.type === "SCHEMA" && r.name === "public" && serverVersion >= 150000
        ? [`${owner}=UC/${owner}`, `=U/${owner}`]
        : strs(r.base);
    const sql = aclCommands(
      {
        type: str(r.type),
        name: str(r.name),
        subname: r.subname === null ? undefined : str(r.subname),
        schema: r.schema === null ? undefined : quote(str(r.schema)),
        owner: str(r.owner),
        acl: strs(r.acl),
        base,
      },
      quote,
      serverVersion,
    );
    if (sql === "") continue;
    const tag =
      r.subname === null ? `${str(r.type)} ${str(r.name)}` : `COLUMN ${str(r.name)}.${str(r.subname)}`;
    const key = str(r.key);
    blocks.set(key, (blocks.get(key) ?? "") + header(tag, "ACL", r.schema, str(r.owner), sql));
  }
  return blocks;
}

/**
 * ALTER DEFAULT PRIVILEGES for each pg_default_acl row, in pg_dump's order (those for a schema
 * first, by schema; then the global ones; each by object kind's letter). A global row is relative
 * to the kind's built-in default; a schema's can only add, so it is relative to nothing.
 */
export async function defaultPrivileges(
  client: PgClient,
  serverVersion: number,
  quote: Quote,
): Promise<string> {
  const found = await rows(
    client,
    `SELECT d.defaclobjtype AS kind, pg_get_userbyid(d.defaclrole) AS owner, n.nspname AS schema,
            ${items("d.defaclacl")} AS acl,
            ${items(`CASE WHEN d.defaclnamespace = 0
                          THEN acldefault(CASE WHEN d.defaclobjtype = 'S' THEN 's'::"char" ELSE d.defaclobjtype END, d.defaclrole)
                          ELSE '{}' END`)} AS base
       FROM pg_default_acl d LEFT JOIN pg_namespace n ON n.oid = d.defaclnamespace
      ORDER BY n.nspname IS NULL, n.nspname COLLATE "C", d.defaclobjtype::text COLLATE "C",
               pg_get_userbyid(d.defaclrole) COLLATE "C"`,
  );
  let out = "";
  for (const r of found) {
    const type = DEFAULT_KINDS[str(r.kind)];
    if (type === undefined) continue;
    let prefix = `ALTER DEFAULT PRIVILEGES FOR ROLE ${quote(str(r.owner))} `;
    if (r.schema !== null) prefix += `IN SCHEMA ${quote(str(r.schema))} `;
    const sql = aclCommands(
      { type, name: "", owner: str(r.owner), acl: strs(r.acl), base: strs(r.base), prefix },
      quote,
      serverVersion,
    );
    if (sql !== "")
      out += header(`DEFAULT PRIVILEGES FOR ${type}`, "DEFAULT ACL", r.schema, str(r.owner), sql);
  }
  return out;
}

/** pg_default_acl's object kinds, as ALTER DEFAULT PRIVILEGES names them. */
const DEFAULT_KINDS: Record<string, string> = {
  r: "TABLES",
  S: "SEQUENCES",
  f: "FUNCTIONS",
  T: "TYPES",
  n: "SCHEMAS",
};

/** An aclitem[] as its items' text (`role=arw/grantor`), in order; `{}` stays empty. */
const items = (acl: string) => `array(SELECT unnest(${acl})::text)`;

const header = (tag: string, type: string, schema: unknown, owner: string, sql: string) =>
  `${tocHeader(tag, type, schema === null ? "-" : str(schema), owner)}${sql}\n\n`;

interface AclObject {
  /** GRANT's object kind: TABLE, SEQUENCE, FUNCTION, PROCEDURE, TYPE, SCHEMA (TABLES … for defaults). */
  type: string;
  /** The object's name as GRANT takes it after its schema (quoted; a function's with its arguments). */
  name: string;
  /** A column's name (quoted), for a column's privileges. */
  subname?: string | undefined;
  /** The object's schema (quoted). */
  schema?: string | undefined;
  owner: string;
  acl: string[];
  base: string[];
  prefix?: string;
}

/**
 * The REVOKEs of `base`'s items that `acl` lacks, then the GRANTs of `acl`'s items that `base`
 * lacks (the owner's own first), each grant by a grantor other than the owner wrapped in SET
 * SESSION AUTHORIZATION: buildACLCommands, item for item.
 */
function aclCommands(o: AclObject, quote: Quote, serverVersion: number): string {
  const prefix = o.prefix ?? "";
  // Before Postgres 17, pg_dump wrote the (empty) name of ALTER DEFAULT PRIVILEGES' object too.
  const name = o.name || serverVersion < 170000 ? `${o.name} ` : "";
  const target = `${o.type} ${o.schema ? `${o.schema}.` : ""}${name}`;
  const to = (grantee: string) => (grantee === "" ? "PUBLIC" : quote(grantee));
  let first = "";
  let second = "";
  for (const item of o.base.filter((b) => !o.acl.includes(b))) {
    const parsed = parseAclItem(item, o, serverVersion, false);
    if (parsed.privs) first += `${prefix}REVOKE ${parsed.privs} ON ${target}FROM ${to(parsed.grantee)};\n`;
  }
  for (const item of o.acl.filter((a) => !o.base.includes(a))) {
    const { grantee, grantor, privs, privsWithGrant } = parseAclItem(item, o, serverVersion, true);
    if (!privs && !privsWithGrant) continue;
    const asOther = grantor !== o.owner;
    let sql = asOther ? `SET SESSION AUTHORIZATION ${quote(grantor)};\n` : "";
    if (privs) sql += `${prefix}GRANT ${privs} ON ${target}TO ${to(grantee)};\n`;
    if (privsWithGrant)
      sql += `${prefix}GRANT ${privsWithGrant} ON ${target}TO ${to(grantee)} WITH GRANT OPTION;\n`;
    if (asOther) sql += "RESET SESSION AUTHORIZATION;\n";
    if (grantee === o.owner && !asOther) first += sql;
    else second += sql;
  }
  return `${first}${second}`;
}

/** Privilege letters in the order GRANT lists them, per object kind (parseAclItem's CONVERT_PRIV). */
function privilegeLetters(type: string, column: boolean, serverVersion: number): [string, string][] {
  switch (type) {
    case "TABLE":
    case "TABLES": {
      const all: [string, string][] = [
        ["r", "SELECT"],
        ["a", "INSERT"],
        ["x", "REFERENCES"],
      ];
      if (!column) {
        all.push(["d", "DELETE"], ["t", "TRIGGER"], ["D", "TRUNCATE"]);
        if (serverVersion >= 170000) all.push(["m", "MAINTAIN"]);
      }
      all.push(["w", "UPDATE"]);
      return all;
    }
    case "SEQUENCE":
    case "SEQUENCES":
      return [
        ["r", "SELECT"],
        ["U", "USAGE"],
        ["w", "UPDATE"],
      ];
    case "FUNCTION":
    case "FUNCTIONS":
    case "PROCEDURE":
      return [["X", "EXECUTE"]];
    case "SCHEMA":
    case "SCHEMAS":
      return [
        ["C", "CREATE"],
        ["U", "USAGE"],
      ];
    default: // TYPE, TYPES
      return [["U", "USAGE"]];
  }
}

/**
 * An ACL item `grantee=privileges/grantor` (names double-quoted when they need it; an empty grantee
 * is PUBLIC) as GRANT's privilege lists: ALL when it holds every privilege of its kind, split by
 * grant option when `splitGrantOption` (a REVOKE revokes both).
 */
function parseAclItem(item: string, o: AclObject, serverVersion: number, splitGrantOption: boolean) {
  const [grantee, afterGrantee] = readAclName(item, 0);
  const slash = item.indexOf("/", afterGrantee);
  const codes = item.slice(afterGrantee + 1, slash);
  const [grantor] = readAclName(item, slash + 1);
  const plain: string[] = [];
  const withGrant: string[] = [];
  let allWithGrant = true;
  let allWithout = true;
  const column = o.subname === undefined ? "" : `(${o.subname})`;
  for (const [letter, keyword] of privilegeLetters(o.type, column !== "", serverVersion)) {
    const at = codes.indexOf(letter);
    if (at < 0) {
      allWithGrant = allWithout = false;
    } else if (splitGrantOption && codes[at + 1] === "*") {
      withGrant.push(`${keyword}${column}`);
      allWithout = false;
    } else {
      plain.push(`${keyword}${column}`);
      allWithGrant = false;
    }
  }
  let privs = plain.join(",");
  let privsWithGrant = withGrant.join(",");
  if (allWithGrant) {
    privs = "";
    privsWithGrant = `ALL${column}`;
  } else if (allWithout) {
    privsWithGrant = "";
    privs = `ALL${column}`;
  }
  return { grantee, grantor, privs, privsWithGrant };
}

/** A role name as an ACL item writes it (acl.c putid): quoted unless letters, digits and `_` only. */
const aclName = (role: string) => (/^[A-Za-z0-9_]*$/.test(role) ? role : `"${role.replaceAll('"', '""')}"`);

/** A role name in an ACL item from `at` up to its `=` or the end, dequoted; and where it ends. */
function readAclName(item: string, at: number): [string, number] {
  let name = "";
  let i = at;
  while (i < item.length && item[i] !== "=") {
    if (item[i] !== '"') {
      name += item[i++];
      continue;
    }
    i++;
    while (i < item.length && !(item[i] === '"' && item[i + 1] !== '"')) {
      if (item[i] === '"') i++;
      name += item[i++];
    }
    i++;
  }
  return [name, i];
}
