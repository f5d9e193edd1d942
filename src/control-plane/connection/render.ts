/** Connection strings as the public API hands them out. */

/** Where the front door listens, when computes are real (Config.frontDoor). */
export interface DoorAddress {
  host: string;
  port: number;
}

/**
 * A connection URI. With the front door listening, it points there and names the endpoint in
 * `options` (Neon's routing form that needs no DNS and no SNI), so it connects as handed out with
 * psql and node-postgres; it carries no sslmode (node-postgres reads `require` as verify-full,
 * which a self-signed authority fails unless trusted: see the README). Without one, it names
 * the endpoint's host as Neon's do.
 */
/** A role's password as far as the control plane knows it: "" once it was set with SQL. */
export function knownPassword(role: { password: string; verifier: string | null }): string {
  return role.verifier === null ? role.password : "";
}

export function connectionUri(
  role: string,
  password: string,
  endpoint: { id: string; host: string },
  database: string,
  pooled: boolean,
  door: DoorAddress | undefined,
): string {
  // A role whose password was set with SQL has none the emulator knows: the client supplies it.
  const credentials = password
    ? `${encodeURIComponent(role)}:${encodeURIComponent(password)}`
    : encodeURIComponent(role);
  if (door) {
    const id = pooled ? `${endpoint.id}-pooler` : endpoint.id;
    const host = door.host.includes(":") ? `[${door.host}]` : door.host;
    return `postgresql://${credentials}@${host}:${door.port}/${encodeURIComponent(database)}?options=endpoint%3D${id}`;
  }
  const host = pooled ? poolerHost(endpoint) : endpoint.host;
  return `postgresql://${credentials}@${host}/${encodeURIComponent(database)}?sslmode=require`;
}

/** The pooled host of an endpoint: its host with `-pooler` right after the endpoint id. */
export function poolerHost(endpoint: { id: string; host: string }): string {
  return endpoint.host.replace(endpoint.id, `${endpoint.id}-pooler`);
}

/** One `connection_uris` entry, as project and branch creation answer it. */
export function connectionDetails(
  role: { name: string; password: string; verifier: string | null },
  endpoint: { id: string; host: string },
  database: string,
  door: DoorAddress | undefined,
) {
  const password = knownPassword(role);
  return {
    connection_uri: connectionUri(role.name, password, endpoint, database, false, door),
    connection_parameters: {
      database,
      password,
      role: role.name,
      host: endpoint.host,
      pooler_host: poolerHost(endpoint),
    },
  };
}
