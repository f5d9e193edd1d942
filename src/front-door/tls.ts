import type tlsModule from "node:tls";
import { requireFromPackage } from "../platform/package-root.js";

let loaded: typeof tlsModule | undefined;

/**
 * node:tls, loaded at run time: a start-up snapshot cannot hold it (its native bindings are not
 * registered for snapshots; see main.ts and test/server/snapshot.test.ts).
 */
export function tls(): typeof tlsModule {
  loaded ??= requireFromPackage()("node:tls") as typeof tlsModule;
  return loaded;
}
