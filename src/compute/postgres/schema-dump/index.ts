import { createTwoFilesPatch } from "diff";
import type { PgClient } from "../../../platform/pg.js";
import { defaultPrivileges, privileges } from "./acls.js";
import { type Entry, identQuoter, literal, type Row, rows, str, tocHeader } from "./entries.js";
import { foreignServers } from "./foreign.js";
import { aggregates, functions } from "./functions.js";
import { relations } from "./relations.js";
import { textSearch } from "./text-search.js";
import { collations, extensions, schemas, types } from "./types.js";

/**
 * `pg_dump --schema-only` for a branch's database, built from catalog queries (the Postgres
 * binaries the emulator runs ship no pg_dump), and the unified diff of two such dumps: what Neon's
 * branch `schema` and `compare_schema` answer.
 *
 * The text follows pg_dump's plain format (its header, one commented block per object, the same
 * statements for the object kinds covered) and is deterministic: objects are sorted by kind, schema
 * and name, then moved only as far as their dependencies (pg_depend) require, as pg_dump's TopoSort
 * moves them, so two databases with the same schema dump the same text whatever order their
 * objects were made in. Privileges follow every other entry, as pg_dump prints them.
 * test/compute/schema-dump-pg-dump.test.ts holds the text to pg_dump's own.
 *
 * This file holds the public API (dumpSchema, diffSchemas) and the orchestration: collecting every
 * family's entries, the header, comments, and the order dependencies impose. The catalog queries
 * live beside it, one file per object family (types, functions, relations and their parts,
 * publications, privileges).
 */

/**
 * The schema of the connected database as `pg_dump --schema-only` prints it. User objects only:
 * nothing in pg_catalog, information_schema or pg_toast, nothing an extension made (its CREATE
 * EXTENSION stands for it). Runs in one read-only repeatable-read transaction with an empty
 * search_path, as pg_dump does, so every name the server deparses comes schema-qualified; `client`
 * must not be inside a transaction of its own.
 */
export async function dumpSchema(client: PgClient): Promise<string> {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    await client.query("SET LOCAL search_path = ''");
    return await collect(client);
  } finally {
    await client.query("ROLLBACK");
  }
}

async function collect(client: PgClient): Promise<string> {
  const [version] = await rows(
    client,
    `SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS num,
            current_setting('server_encoding') AS encoding`,
  );
  const v = version as Row;
  const serverVersion = v.num as number;
  const quote = await identQuoter(client);
  const entries: Entry[] = [
    ...(await schemas(client)),
    ...(await collations(client)),
    ...(await extensions(client)),
    ...(await types(client)),
    ...(await functions(client, quote)),
    ...(await aggregates(client)),
    ...(await textSearch(client)),
    ...(await foreignServers(client, quote)),
    ...(await relations(client, serverVersion)),
  ];
  const descriptions = new Map<string, string>();
  for (const r of await rows(
    client,
    `SELECT classoid::regclass::text || ':' || objoid || ':' || objsubid AS key, description
       FROM pg_description WHERE objoid >= 16384`,
  ))
    descriptions.set(str(r.key), str(r.description));
  const depends = await rows(
    client,
    `SELECT classid::regclass::text || ':' || objid AS dependent,
            refclassid::regclass::text || ':' || refobjid AS referenced, deptype
       FROM pg_depend WHERE deptype <> 'p' AND objid >= 16384 AND refobjid >= 16384`,
  );

  let out = "--\n-- PostgreSQL database dump\n--\n\n";
  // Neon answers with its pg_dump's header; this dump stands in for it.
  out += `-- Dumped from database version ${str(v.version)}\n-- Dumped by pg_dump version ${str(v.version)}\n\n`;
  out += "SET statement_timeout = 0;\nSET lock_timeout = 0;\nSET idle_in_transaction_session_timeout = 0;\n";
  if (serverVersion >= 170000) out += "SET transaction_timeout = 0;\n";
  out += `SET client_encoding = ${literal(str(v.encoding))};\nSET standard_conforming_strings = on;\n`;
  out += "SELECT pg_catalog.set_config('search_path', '', false);\nSET check_function_bodies = false;\n";
  out += "SET xmloption = content;\nSET client_min_messages = warning;\nSET row_security = off;\n\n";
  let tablespaceSet = false;
  let accessMethod: string | null = null;
  const print = (e: Entry) => {
    if (e.storage && !tablespaceSet) {
      out += "SET default_tablespace = '';\n\n";
      tablespaceSet = true;
    }
    if (e.storage?.accessMethod && e.storage.accessMethod !== accessMethod) {
      accessMethod = e.storage.accessMethod;
      out += `SET default_table_access_method = ${accessMethod};\n\n`;
    }
    out += `${tocHeader(e.name, e.type, e.schema, e.owner)}${e.sql}\n\n`;
    if (!e.unterminated) out += "\n";
    if (e.ownerSql) out += `${e.ownerSql}\n\n`;
    for (const c of e.comments ?? []) {
      const text = descriptions.get(c.key);
      if (text === undefined) continue;
      const owner = e.type === "EXTENSION" ? "" : e.owner;
      out += tocHeader(c.tag, "COMMENT", e.schema, owner);
      out += `COMMENT ON ${c.sql} IS ${literal(text)};\n\n\n`;
    }
    for (const next of e.then ?? []) print(next);
  };
  const order = ordered(entries, depends);
  for (const e of order) if (!e.aclOnly) print(e);
  // Privileges come after every other entry, in their objects' order.
  const acls = await privileges(client, serverVersion, quote);
  for (const e of order) {
    const key = e.keys[0];
    if (key === undefined) continue;
    out += acls.get(key) ?? "";
    acls.delete(key);
  }
  out += await defaultPrivileges(client, serverVersion, quote);
  return `${out}--\n-- PostgreSQL database dump complete\n--\n\n`;
}

/**
 * Entries in dump order, as pg_dump's TopoSort makes it: sorted by rank, schema and name, then
 * placed from the last backwards, each time the latest entry that nothing still to be placed
 * needs; so what an entry needs moves up to just before it, and the sorted order stays wherever
 * dependencies do not forbid it. A cycle is broken at its latest entry.
 */
function ordered(entries: Entry[], depends: Row[]): Entry[] {
  const sorted = [...entries].sort(
    (a, b) =>
      a.rank - b.rank ||
      cmp(a.schema, b.schema) ||
      cmp(a.sortName ?? a.name, b.sortName ?? b.name) ||
      cmp(a.name, b.name) ||
      cmp(a.type, b.type),
  );
  const byKey = new Map<string, number>();
  sorted.forEach((e, i) => {
    // `pg_class:0` and the like: an oid column that names nothing for this object.
    for (const k of e.keys) if (!/:(0|null)$/.test(k)) byKey.set(k, i);
  });
  // An extension's members stand for the extension: a column of type citext follows CREATE EXTENSION.
  for (const d of depends)
    if (d.deptype === "e") {
      const ext = byKey.get(str(d.referenced));
      if (ext !== undefined && !byKey.has(str(d.dependent))) byKey.set(str(d.dependent), ext);
    }
  const needs = sorted.map(() => new Set<number>());
  const link = (from: number | undefined, to: number | undefined) => {
    if (from !== undefined && to !== undefined && from !== to) needs[from]?.add(to);
  };
  for (const d of depends)
    if (d.deptype !== "e") link(byKey.get(str(d.dependent)), byKey.get(str(d.referenced)));
  sorted.forEach((e, i) => {
    for (const k of e.after ?? []) link(i, byKey.get(k));
  });
  // How many entries still to be placed need each one.
  const neededBy = sorted.map(() => 0);
  for (const s of needs) for (const j of s) neededBy[j] = (neededBy[j] ?? 0) + 1;
  const placed = new Array<boolean>(sorted.length).fill(false);
  const ready: number[] = [];
  neededBy.forEach((n, i) => {
    if (n === 0) ready.push(i);
  });
  const out = new Array<Entry>(sorted.length);
  let lastLeft = sorted.length - 1;
  for (let at = sorted.length - 1; at >= 0; at--) {
    let next = ready.pop();
    if (next === undefined) {
      while (placed[lastLeft]) lastLeft--;
      next = lastLeft;
    }
    if (placed[next]) {
      at++;
      continue;
    }
    placed[next] = true;
    out[at] = sorted[next] as Entry;
    for (const j of needs[next] ?? []) {
      neededBy[j] = (neededBy[j] ?? 0) - 1;
      if (neededBy[j] === 0 && !placed[j]) insertSorted(ready, j);
    }
  }
  return out;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function insertSorted(list: number[], n: number): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as number) < n) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, n);
}

/**
 * The unified diff turning `base` into `target` (git's format: `--- a/…`, `+++ b/…`, hunks with
 * three lines of context), or "" when they are equal.
 */
export function diffSchemas(
  base: string,
  target: string,
  labels: { base: string; target: string } = { base: "a", target: "b" },
): string {
  if (base === target) return "";
  const patch = createTwoFilesPatch(labels.base, labels.target, base, target, undefined, undefined, {
    context: 3,
  });
  // jsdiff opens with a row of "=" (svn's separator), which git and diff -u do not print.
  return patch.replace(/^=+\n/, "");
}
