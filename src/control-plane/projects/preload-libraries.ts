/**
 * Shared preload libraries every emulated compute can load (contrib modules shipped with the
 * Postgres binaries of every major): listed by GET /projects/{p}/available_preload_libraries and
 * loaded when named in the project's `settings.preload_libraries.enabled_libraries`. The default
 * ones (`is_default`) load unless `settings.preload_libraries.use_defaults` is false: Neon's
 * computes preload pg_stat_statements, so `CREATE EXTENSION pg_stat_statements` gives a working view.
 */
export const PRELOAD_LIBRARIES = [
  {
    library_name: "pg_stat_statements",
    description: "Track planning and execution statistics of all SQL statements executed",
    isDefault: true,
    versions: { 14: "1.9", 15: "1.10", 16: "1.10", 17: "1.11", 18: "1.12" } as Record<number, string>,
  },
  {
    library_name: "auto_explain",
    isDefault: false,
    description: "Log execution plans of slow statements automatically",
    versions: {} as Record<number, string>,
  },
  {
    library_name: "pg_prewarm",
    isDefault: false,
    description: "Prewarm relation data (and its autoprewarm worker)",
    versions: { 14: "1.2", 15: "1.2", 16: "1.2", 17: "1.2", 18: "1.2" } as Record<number, string>,
  },
  {
    library_name: "auth_delay",
    isDefault: false,
    description: "Pause briefly before reporting authentication failure",
    versions: {} as Record<number, string>,
  },
  {
    library_name: "passwordcheck",
    isDefault: false,
    description: "Check role passwords and reject weak ones",
    versions: {} as Record<number, string>,
  },
] as const;

export function availablePreloadLibraries(pgVersion: number) {
  return PRELOAD_LIBRARIES.map((lib) => ({
    library_name: lib.library_name,
    description: lib.description,
    is_default: lib.isDefault,
    is_experimental: false,
    version: lib.versions[pgVersion] ?? String(pgVersion),
  }));
}

/**
 * The libraries a project's computes load: the default ones (unless `use_defaults` is false),
 * then the known ones its settings enable, in the order given, each once; of those, the ones the
 * binaries hold (`installed`: a server asked to preload a module it lacks does not start).
 */
export function enabledPreloadLibraries(
  settings: unknown,
  installed: (library: string) => boolean = () => true,
): string[] {
  const asked = (
    settings as { preload_libraries?: { enabled_libraries?: unknown; use_defaults?: unknown } } | null
  )?.preload_libraries;
  const defaults =
    asked?.use_defaults === false
      ? []
      : PRELOAD_LIBRARIES.filter((l) => l.isDefault).map((l) => l.library_name);
  const wanted = Array.isArray(asked?.enabled_libraries) ? asked.enabled_libraries : [];
  const known = new Set<string>(PRELOAD_LIBRARIES.map((l) => l.library_name));
  return [
    ...new Set([
      ...defaults,
      ...wanted.filter((name): name is string => typeof name === "string" && known.has(name)),
    ]),
  ].filter(installed);
}
