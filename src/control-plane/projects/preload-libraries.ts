/**
 * Shared preload libraries every emulated compute can load (contrib modules shipped with the
 * Postgres binaries of every major): listed by GET /projects/{p}/available_preload_libraries and
 * loaded when named in the project's `settings.preload_libraries.enabled_libraries`.
 */
export const PRELOAD_LIBRARIES = [
  {
    library_name: "pg_stat_statements",
    description: "Track planning and execution statistics of all SQL statements executed",
    versions: { 14: "1.9", 15: "1.10", 16: "1.10", 17: "1.11", 18: "1.12" } as Record<number, string>,
  },
  {
    library_name: "auto_explain",
    description: "Log execution plans of slow statements automatically",
    versions: {} as Record<number, string>,
  },
  {
    library_name: "pg_prewarm",
    description: "Prewarm relation data (and its autoprewarm worker)",
    versions: { 14: "1.2", 15: "1.2", 16: "1.2", 17: "1.2", 18: "1.2" } as Record<number, string>,
  },
  {
    library_name: "auth_delay",
    description: "Pause briefly before reporting authentication failure",
    versions: {} as Record<number, string>,
  },
  {
    library_name: "passwordcheck",
    description: "Check role passwords and reject weak ones",
    versions: {} as Record<number, string>,
  },
] as const;

export function availablePreloadLibraries(pgVersion: number) {
  return PRELOAD_LIBRARIES.map((lib) => ({
    library_name: lib.library_name,
    description: lib.description,
    is_default: false,
    is_experimental: false,
    version: lib.versions[pgVersion] ?? String(pgVersion),
  }));
}

/** The known libraries a project's settings enable, in the order given, each once. */
export function enabledPreloadLibraries(settings: unknown): string[] {
  const wanted = (settings as { preload_libraries?: { enabled_libraries?: unknown } } | null)
    ?.preload_libraries?.enabled_libraries;
  if (!Array.isArray(wanted)) return [];
  const known = new Set<string>(PRELOAD_LIBRARIES.map((l) => l.library_name));
  return [...new Set(wanted.filter((name): name is string => typeof name === "string" && known.has(name)))];
}
