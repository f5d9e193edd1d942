/** Connection strings as the public API hands them out. */

export function connectionUri(role: string, password: string, host: string, database: string): string {
  return `postgresql://${encodeURIComponent(role)}:${encodeURIComponent(password)}@${host}/${encodeURIComponent(database)}?sslmode=require`;
}

/** The pooled host of an endpoint: its host with `-pooler` right after the endpoint id. */
export function poolerHost(endpoint: { id: string; host: string }): string {
  return endpoint.host.replace(endpoint.id, `${endpoint.id}-pooler`);
}

/** One `connection_uris` entry, as project and branch creation answer it. */
export function connectionDetails(
  role: { name: string; password: string },
  endpoint: { id: string; host: string },
  database: string,
) {
  return {
    connection_uri: connectionUri(role.name, role.password, endpoint.host, database),
    connection_parameters: {
      database,
      password: role.password,
      role: role.name,
      host: endpoint.host,
      pooler_host: poolerHost(endpoint),
    },
  };
}
