import fs from "node:fs";
import path from "node:path";
import { readdir } from "./binaries.js";

/**
 * Where the driver keeps what it makes, under the data folder (NEON_EMULATOR_DATA_DIR):
 *
 * ```
 * templates/pg<major>/                       a cluster per major, each new project's first branch copies it
 * engines/pg<major>-<key>/                   the installation servers run from (engine.ts)
 * settings-check/                            an empty folder `postgres -C` checks pg_settings in
 * admin-password                             the administrator's password (admin.ts)
 * projects/<project>/
 *   branches/<branch>/                       a branch's Postgres data folder
 *   snapshots/<snapshot>/                    a snapshot's copy of one
 *   history/<id>/                            branch histories: archived WAL and base copies (history.ts)
 *   replicas/<branch>/<endpoint>/            a running read replica's copy
 *   endpoints/<endpoint>.conf|.pgpass|.reconciled   a running compute's files out of its folder
 * ```
 */
export class DataLayout {
  constructor(readonly dataDir: string) {}

  /** A major's template cluster. */
  template(major: number): string {
    return path.join(this.dataDir, "templates", `pg${major}`);
  }

  /** Where the installations servers run from are made. */
  engines(): string {
    return path.join(this.dataDir, "engines");
  }

  /** The administrator's password (admin.ts). */
  adminPassword(): string {
    return path.join(this.dataDir, "admin-password");
  }

  /** The folder `postgres -C` checks pg_settings in (settings-check.ts). */
  settingsCheck(): string {
    return path.join(this.dataDir, "settings-check");
  }

  projects(): string {
    return path.join(this.dataDir, "projects");
  }

  project(projectId: string): string {
    return path.join(this.projects(), projectId);
  }

  branch(projectId: string, branchId: string): string {
    return path.join(this.project(projectId), "branches", branchId);
  }

  /** A snapshot's copy of a branch's folder. */
  snapshot(projectId: string, snapshotId: string): string {
    return path.join(this.project(projectId), "snapshots", snapshotId);
  }

  /** Where a branch's read replicas keep their folders. */
  replicas(projectId: string, branchId: string): string {
    return path.join(this.project(projectId), "replicas", branchId);
  }

  /** A running compute's own settings (its endpoint's pg_settings), the configuration file its server reads. */
  ownSettings(projectId: string, endpointId: string): string {
    return path.join(this.project(projectId), "endpoints", `${endpointId}.conf`);
  }

  /**
   * A read replica's password file (libpq's format), beside its settings file: never in
   * primary_conninfo, which pg_monitor's members (every role the API makes) may read, nor in its
   * data folder, which a base backup over a replication connection would stream to a client.
   */
  replicaPassfile(projectId: string, replicaId: string): string {
    return path.join(this.project(projectId), "endpoints", `${replicaId}.pgpass`);
  }

  /**
   * A file beside a primary's settings saying a reconcile succeeded on its server: after a crash
   * of the emulator, what SQL changed in the roles and databases of a server so marked is taken
   * from it before it is ended (PostgresDriver.takeOrphanCatalog).
   */
  reconciledMark(projectId: string, endpointId: string): string {
    return path.join(this.project(projectId), "endpoints", `${endpointId}.reconciled`);
  }

  /** The pid files of every folder a server may run on (a crash may have left their servers). */
  pidFiles(): string[] {
    const files: string[] = [];
    const projectsDir = this.projects();
    for (const project of readdir(projectsDir)) {
      // Branch folders, and those of copies and replays under way (a crash may have left their servers).
      for (const folder of ["branches", "snapshots"])
        for (const name of readdir(path.join(projectsDir, project, folder)))
          files.push(path.join(projectsDir, project, folder, name, "postmaster.pid"));
      const replicas = path.join(projectsDir, project, "replicas");
      for (const branch of readdir(replicas))
        for (const endpoint of readdir(path.join(replicas, branch)))
          files.push(path.join(replicas, branch, endpoint, "postmaster.pid"));
    }
    return files;
  }

  /** The folders copies are made in, as makeCopiesFolder marks them (a data folder older than the mark gets it here). */
  copiesFolders(): string[] {
    const projectsDir = this.projects();
    if (!fs.existsSync(projectsDir)) return [];
    const folders = [projectsDir];
    for (const project of readdir(projectsDir)) {
      const dir = path.join(projectsDir, project);
      const replicas = path.join(dir, "replicas");
      folders.push(dir, path.join(dir, "branches"), path.join(dir, "snapshots"), replicas);
      for (const branch of readdir(replicas)) folders.push(path.join(replicas, branch));
    }
    return folders.filter((dir) => fs.existsSync(dir));
  }
}
