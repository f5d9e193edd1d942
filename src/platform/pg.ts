import type pgModule from "pg";
import { requireFromPackage } from "./package-root.js";

export type PgClient = pgModule.Client;
let loaded: typeof pgModule | undefined;

/**
 * node-postgres, loaded from node_modules at run time: it cannot be part of the start-up snapshot
 * (evaluating it there loads node:http, which a snapshot cannot hold; see main.ts).
 */
export function pg(): typeof pgModule {
  loaded ??= requireFromPackage()("pg") as typeof pgModule;
  return loaded;
}
