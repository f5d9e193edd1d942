/**
 * Which endpoint a connection is for, found as Neon's proxy finds it: the `options` start-up
 * parameter (`endpoint=<id>`), the TLS server name (`<id>[-pooler].<region>.<domain>`), or, when
 * neither names one, the password (`endpoint=<id>;<password>` or `endpoint=<id>$<password>`).
 * Texts are the proxy's own (all answered as ERROR XX000).
 */

export const MISSING_ENDPOINT =
  "Endpoint ID is not specified. Either please upgrade the postgres client library (libpq) for SNI support or pass the endpoint ID (first part of the domain name) as a parameter: '?options=endpoint%3D<endpoint-id>'. See more at https://neon.tech/sni";

/** A connection asking for Neon's Time Travel (the `neon` CLI's `<branch>@<timestamp|lsn>` strings). */
export const TIME_TRAVEL =
  "Time Travel connections (neon_timestamp / neon_lsn in options) are not available on neon-emulator: create a branch at that point (parent_timestamp or parent_lsn) and connect to its endpoint";

export class RoutingError extends Error {}

export interface Target {
  /** The endpoint id without `-pooler`. */
  endpointId: string;
  /** Whether the pooled form (`-pooler`) was asked for. */
  pooled: boolean;
}

const POOLER = "-pooler";

function checked(id: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(id))
    throw new RoutingError(`Project name ('${id}') must contain only alphanumeric characters and hyphen.`);
  return id;
}

function target(id: string): Target {
  const pooled = id.endsWith(POOLER);
  return { endpointId: pooled ? id.slice(0, -POOLER.length) : id, pooled };
}

/** An `options` token naming the endpoint: `endpoint=<id>` (or `project=<id>`), the proxy's, not the compute's. */
const ROUTING_TOKEN = /^(?:--)?(?:endpoint|project)=/;

/** The endpoint named among `options` tokens. */
function fromOptions(tokens: string[]): string | undefined {
  const found: string[] = [];
  for (const token of tokens) {
    if (ROUTING_TOKEN.test(token)) found.push(token.slice(token.indexOf("=") + 1));
  }
  // Two endpoint tokens name none (as the proxy reads them).
  return found.length === 1 ? checked(found[0] as string) : undefined;
}

/** The endpoint named by a TLS server name under `domain`; names outside it are ignored. */
export function fromServerName(serverName: string | undefined, domain: string): string | undefined {
  if (!serverName) return undefined;
  const dot = serverName.indexOf(".");
  if (dot <= 0) return undefined;
  const rest = serverName.slice(dot + 1).toLowerCase();
  if (rest !== domain && !rest.endsWith(`.${domain}`)) return undefined;
  const sub = serverName.slice(0, dot);
  if (sub === "api" || sub === "apiauth") return undefined;
  return checked(sub);
}

/** The endpoint a host name names by its first label, whatever the domain (SQL over HTTP, as the proxy reads it). */
export function fromHostName(host: string): Target {
  return target(checked(host.split(".")[0] as string));
}

/** The endpoint of a connection from its options and server name; both must agree when both name one. */
export function routeOf(
  params: Record<string, string>,
  serverName: string | undefined,
  domain: string,
): Target | undefined {
  const tokens = params.options ? optionTokens(params.options) : [];
  if (tokens.some((token) => /^neon_(?:timestamp|lsn):/.test(token))) throw new RoutingError(TIME_TRAVEL);
  const byOption = fromOptions(tokens);
  const bySni = fromServerName(serverName, domain);
  if (byOption && bySni && byOption !== bySni)
    throw new RoutingError(
      `Inconsistent project name inferred from SNI ('${bySni}') and project option ('${byOption}').`,
    );
  const id = byOption ?? bySni;
  return id ? target(id) : undefined;
}

/** The endpoint and the real password from a password of the form `endpoint=<id>;<password>` (or `$`). */
export function fromPassword(password: string): { target: Target; password: string } {
  const m = /^endpoint=([^;$]*)[;$]([\s\S]*)$/.exec(password);
  if (!m) throw new RoutingError(MISSING_ENDPOINT);
  return { target: target(checked(m[1] as string)), password: m[2] as string };
}

/** What separates options tokens: C's isspace, as Postgres tests each byte. */
const SPACES = " \t\n\v\f\r";

/**
 * The tokens of an `options` start-up parameter as Postgres splits them (pg_split_opts):
 * separated by whitespace, a backslash taking the next character as it is (`\ ` a space in a value).
 */
function optionTokens(options: string): string[] {
  const tokens: string[] = [];
  let token: string | undefined;
  let escaped = false;
  for (const char of options) {
    if (!escaped && SPACES.includes(char)) {
      if (token !== undefined) tokens.push(token);
      token = undefined;
    } else if (!escaped && char === "\\") {
      escaped = true;
      token ??= "";
    } else {
      escaped = false;
      token = (token ?? "") + char;
    }
  }
  if (token !== undefined) tokens.push(token);
  return tokens;
}

/** The options tokens meant for the compute: the routing tokens removed. */
export function computeOptionTokens(options: string | undefined): string[] {
  return options ? optionTokens(options).filter((t) => !ROUTING_TOKEN.test(t)) : [];
}

/** The options to pass on to the compute: the routing tokens removed, the others escaped as Postgres reads them. */
export function forwardedOptions(options: string | undefined): string | undefined {
  const kept = computeOptionTokens(options)
    .map((token) => [...token].map((c) => (c === "\\" || SPACES.includes(c) ? `\\${c}` : c)).join(""))
    .join(" ");
  return kept || undefined;
}
