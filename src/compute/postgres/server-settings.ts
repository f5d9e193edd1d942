import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { pgSettingProblem, SHARED_BUFFERS } from "../../control-plane/endpoints/rules.js";
import type { PgClient } from "../../platform/pg.js";
import { archiveCommand, historiesDir, historyOf } from "./history.js";
import { handOverFile } from "./process.js";

/**
 * What the servers run with: the settings every server's command line sets, a compute's own
 * configuration file (its endpoint's pg_settings over the emulator's defaults), and the settings
 * a hot standby and a primary archiving its WAL need.
 */

/**
 * Defaults an endpoint's `pg_settings` may change. wal_buffers: Postgres zeroes all of it at start
 * (4 MB, 1/32 of shared_buffers, by default), a quarter of an idle server's memory; 1 MB serves a
 * compute's writes as well at the sizes an emulator sees.
 */
const DEFAULT_SETTINGS: Record<string, string> = { wal_buffers: "1MB" };

/**
 * pg_stat_statements' defaults here, which an endpoint's `pg_settings` may change: its table is
 * made whole at start, 2.1 MB of shared memory at Postgres' default of 5,000 statements, which
 * took an idle compute over 16 MB; 1,000 statements take 0.4 MB.
 */
const STAT_STATEMENTS_SETTINGS: Record<string, string> = { "pg_stat_statements.max": "1000" };

/**
 * Settings every server runs with. No statement is ever written to the server's log (a role's
 * password travels inside CREATE/ALTER ROLE); servers listen on the loopback interface only.
 */
export const BASE_SETTINGS: Record<string, string> = {
  listen_addresses: "127.0.0.1",
  unix_socket_directories: "",
  shared_buffers: SHARED_BUFFERS,
  log_min_error_statement: "panic",
  log_statement: "none",
  lc_messages: "C",
  logging_collector: "off",
};

/**
 * What every compute's command line sets, whatever an endpoint's pg_settings say (a value there is
 * not used, so not checked: a locale the host lacks in lc_messages, say).
 */
export const OVERRIDDEN_SETTINGS = new Set([...Object.keys(BASE_SETTINGS), "max_connections"]);

/**
 * Settings of a server the emulator starts on a branch's folder for its own work (no compute):
 * wal_level=logical, since a folder holding a logical replication slot (made under the project's
 * logical replication or an endpoint's pg_settings) starts with nothing less.
 */
export const ADMIN_SERVER_SETTINGS: Record<string, string> = { ...BASE_SETTINGS, wal_level: "logical" };

/** An endpoint's `settings.pg_settings`; a setting the API no longer takes (stored before it was refused) is left out. */
export function endpointPgSettings(settings: unknown): Record<string, string> {
  return Object.fromEntries(
    Object.entries((settings as { pg_settings?: Record<string, string> }).pg_settings ?? {}).filter(
      ([name]) => pgSettingProblem(name) === null,
    ),
  );
}

/** What a compute's own configuration file sets: the emulator's defaults, then the endpoint's pg_settings. */
export function ownSettings(preload: string[], pgSettings: Record<string, string>): Record<string, string> {
  return {
    ...DEFAULT_SETTINGS,
    ...(preload.includes("pg_stat_statements") ? STAT_STATEMENTS_SETTINGS : {}),
    ...pgSettings,
  };
}

/**
 * Writes a file of an endpoint's (its settings, a replica's password file) whole, readable by the
 * servers' user alone, in the project's `endpoints` folder: passable only, as the folders above a
 * branch's are.
 */
export function writeEndpointFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o711 });
  fs.chmodSync(path.dirname(file), 0o711);
  const written = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  fs.writeFileSync(written, text, { mode: 0o600 });
  handOverFile(written);
  fs.renameSync(written, file);
}

/** A value (or file name) as a configuration file takes it: single-quoted, quotes doubled, backslashes and line ends escaped. */
export function configText(value: string): string {
  const escaped = value
    .replace(/\\/g, "\\\\")
    .replace(/'/g, "''")
    .replace(/\n/g, "\\n")
    .replace(/\r/g, "\\r");
  return `'${escaped}'`;
}

/**
 * The settings a hot standby needs at least as high as its primary's (Postgres' check of the
 * primary's parameters in the WAL); past them it stops (at start) or pauses its replay.
 */
export const HOT_STANDBY_SETTINGS = [
  "max_connections",
  "max_worker_processes",
  "max_wal_senders",
  "max_prepared_transactions",
  "max_locks_per_transaction",
];

/** Postgres' refusal of a standby for one of them (lc_messages=C): the setting and the primary's value. */
export const LOWER_THAN_PRIMARY =
  /(\w+) = \d+ is a lower setting than on the primary server, where its value was (\d+)/g;

/** A server's values of HOT_STANDBY_SETTINGS. */
export async function hotStandbySettings(client: PgClient): Promise<Map<string, number>> {
  const { rows } = await client.query<{ name: string; setting: string }>(
    "SELECT name, setting FROM pg_catalog.pg_settings WHERE name = ANY($1)",
    [HOT_STANDBY_SETTINGS],
  );
  return new Map(rows.map((row) => [row.name, Number(row.setting)]));
}

/** The settings that archive a primary's completed WAL segments into the history its folder writes to. */
export function archiving(projectDir: string, dir: string): Record<string, string> {
  const history = historyOf(dir);
  if (!history) return {};
  return {
    archive_mode: "on",
    archive_command: archiveCommand(path.join(historiesDir(projectDir), history)),
  };
}
