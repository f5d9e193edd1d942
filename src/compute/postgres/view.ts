import { and, asc, eq, inArray, isNotNull } from "drizzle-orm";
import { branches } from "../../control-plane/branches/table.js";
import { endpoints } from "../../control-plane/endpoints/table.js";
import { operations } from "../../control-plane/operations/table.js";
import { enabledPreloadLibraries } from "../../control-plane/projects/preload-libraries.js";
import { logicalReplication } from "../../control-plane/projects/rules.js";
import { deletedProjects, projects } from "../../control-plane/projects/table.js";
import { listDrops, originOf } from "../../control-plane/roles-databases/store.js";
import { databases, roles } from "../../control-plane/roles-databases/table.js";
import { snapshots } from "../../control-plane/snapshots/table.js";
import type { Db } from "../../platform/db.js";
import type { BranchSpec } from "./reconcile.js";

/** What the Postgres driver reads of the control plane (read-only, outside any transaction). */
export class ControlPlaneView {
  constructor(private readonly db: Db) {}

  endpoint(id: string) {
    return this.db
      .select({
        id: endpoints.id,
        projectId: endpoints.projectId,
        branchId: endpoints.branchId,
        type: endpoints.type,
        minCu: endpoints.minCu,
        settings: endpoints.settings,
        currentState: endpoints.currentState,
        pendingState: endpoints.pendingState,
      })
      .from(endpoints)
      .where(eq(endpoints.id, id))
      .get();
  }

  branch(id: string) {
    return this.db
      .select({
        id: branches.id,
        projectId: branches.projectId,
        parentId: branches.parentId,
        dataSource: branches.dataSource,
        initSource: branches.initSource,
        restoreSource: branches.restoreSource,
        historyPoint: branches.historyPoint,
      })
      .from(branches)
      .where(eq(branches.id, id))
      .get();
  }

  /** Whether a restore of the branch is under way (accepted, its create_branch operation unfinished). */
  restorePending(branchId: string): boolean {
    if (!this.branch(branchId)?.restoreSource) return false;
    return (
      this.db
        .select({ id: operations.id })
        .from(operations)
        .where(
          and(
            eq(operations.branchId, branchId),
            eq(operations.action, "create_branch"),
            inArray(operations.status, ["scheduling", "running"]),
          ),
        )
        .limit(1)
        .get() !== undefined
    );
  }

  /**
   * Whether a branch of the project waits for its data to be made at a point of a history (a
   * create or restore at a point, accepted, its operation not finished).
   */
  pointsPending(projectId: string): boolean {
    return (
      this.db
        .select({ id: branches.id })
        .from(branches)
        .where(and(eq(branches.projectId, projectId), isNotNull(branches.historyPoint)))
        .limit(1)
        .get() !== undefined
    );
  }

  /** Branches whose folder is still to be made from this branch's data (a restore's preserved state). */
  keepersOf(branchId: string): string[] {
    return this.db
      .select({ id: branches.id })
      .from(branches)
      .where(eq(branches.dataSource, branchId))
      .all()
      .map((b) => b.id);
  }

  /** The LSN a snapshot was taken at. */
  snapshotLsn(id: string): string | undefined {
    return (
      this.db.select({ lsn: snapshots.lsn }).from(snapshots).where(eq(snapshots.id, id)).get()?.lsn ??
      undefined
    );
  }

  /** Whether a snapshot is still recorded (not deleted, its project neither). */
  snapshotExists(id: string): boolean {
    return (
      this.db.select({ id: snapshots.id }).from(snapshots).where(eq(snapshots.id, id)).get() !== undefined
    );
  }

  /** A project's rows: live, kept for recovery after a delete (its folders stay as they are), or gone. */
  projectRows(projectId: string): "live" | "recoverable" | undefined {
    if (this.pgVersion(projectId) !== undefined) return "live";
    const kept = this.db
      .select({ id: deletedProjects.id })
      .from(deletedProjects)
      .where(eq(deletedProjects.id, projectId))
      .get();
    return kept ? "recoverable" : undefined;
  }

  pgVersion(projectId: string): number | undefined {
    return this.db.select({ v: projects.pgVersion }).from(projects).where(eq(projects.id, projectId)).get()
      ?.v;
  }

  /**
   * What the project's settings ask of its servers: the shared preload libraries they load (the
   * defaults among them only when `installed`), and whether logical replication is on (wal_level=logical).
   */
  projectServerSettings(
    projectId: string,
    installed: (library: string) => boolean,
  ): { preload: string[]; logical: boolean } {
    const row = this.db
      .select({ s: projects.settings })
      .from(projects)
      .where(eq(projects.id, projectId))
      .get();
    return { preload: enabledPreloadLibraries(row?.s, installed), logical: logicalReplication(row?.s) };
  }

  /** The branch's read_write endpoint, if any. */
  primaryOf(branchId: string): string | undefined {
    return this.db
      .select({ id: endpoints.id })
      .from(endpoints)
      .where(and(eq(endpoints.branchId, branchId), eq(endpoints.type, "read_write")))
      .get()?.id;
  }

  /** Endpoints recorded as active: their servers run again after a restart. */
  activeEndpoints(): string[] {
    return this.db
      .select({ id: endpoints.id })
      .from(endpoints)
      .where(eq(endpoints.currentState, "active"))
      .all()
      .map((e) => e.id);
  }

  branchSpec(branchId: string): BranchSpec {
    return {
      roles: this.db
        .select({
          name: roles.name,
          password: roles.password,
          verifier: roles.verifier,
          noLogin: roles.noLogin,
        })
        .from(roles)
        .where(eq(roles.branchId, branchId))
        .all(),
      databases: this.db
        .select({
          id: databases.id,
          originId: databases.originId,
          name: databases.name,
          ownerName: databases.ownerName,
        })
        .from(databases)
        .where(eq(databases.branchId, branchId))
        .orderBy(asc(databases.id))
        .all()
        .map((d) => ({ origin: originOf(d), name: d.name, ownerName: d.ownerName })),
      drops: listDrops(this.db, branchId),
      fromSchemaOnly: this.fromSchemaOnly(branchId),
    };
  }

  /** Whether the branch is a schema-only branch or descends from one. */
  private fromSchemaOnly(branchId: string): boolean {
    const seen = new Set<string>();
    for (let id: string | null = branchId; id !== null && !seen.has(id); ) {
      seen.add(id);
      const branch = this.branch(id);
      if (!branch) return false;
      if (branch.initSource === "schema-only") return true;
      id = branch.parentId;
    }
    return false;
  }
}
