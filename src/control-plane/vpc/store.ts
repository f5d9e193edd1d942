import { and, asc, eq, isNull } from "drizzle-orm";
import type { Tx } from "../../platform/db.js";
import { projects } from "../projects/table.js";
import { orgVpcEndpoints, projectVpcEndpoints } from "./table.js";

export type OrgVpcEndpointRow = typeof orgVpcEndpoints.$inferSelect;

export function findOrgVpcEndpoint(tx: Tx, orgAccountId: string, id: string): OrgVpcEndpointRow | undefined {
  return tx
    .select()
    .from(orgVpcEndpoints)
    .where(and(eq(orgVpcEndpoints.orgAccountId, orgAccountId), eq(orgVpcEndpoints.vpcEndpointId, id)))
    .get();
}

export function upsertOrgVpcEndpoint(tx: Tx, row: OrgVpcEndpointRow): void {
  tx.insert(orgVpcEndpoints)
    .values(row)
    .onConflictDoUpdate({
      target: [orgVpcEndpoints.orgAccountId, orgVpcEndpoints.vpcEndpointId],
      set: { label: row.label },
    })
    .run();
}

export function listOrgVpcEndpoints(tx: Tx, orgAccountId: string, regionId?: string): OrgVpcEndpointRow[] {
  return tx
    .select()
    .from(orgVpcEndpoints)
    .where(
      and(
        eq(orgVpcEndpoints.orgAccountId, orgAccountId),
        isNull(orgVpcEndpoints.deletedAt),
        regionId === undefined ? undefined : eq(orgVpcEndpoints.regionId, regionId),
      ),
    )
    .orderBy(asc(orgVpcEndpoints.createdAt), asc(orgVpcEndpoints.vpcEndpointId))
    .all();
}

export function markOrgVpcEndpointDeleted(tx: Tx, orgAccountId: string, id: string, at: number): void {
  tx.update(orgVpcEndpoints)
    .set({ deletedAt: at })
    .where(and(eq(orgVpcEndpoints.orgAccountId, orgAccountId), eq(orgVpcEndpoints.vpcEndpointId, id)))
    .run();
}

/** The account's projects restricted to a VPC endpoint, oldest first. */
export function restrictedProjects(tx: Tx, orgAccountId: string, id: string): string[] {
  return tx
    .select({ id: projects.id })
    .from(projectVpcEndpoints)
    .innerJoin(projects, eq(projects.id, projectVpcEndpoints.projectId))
    .where(and(eq(projects.accountId, orgAccountId), eq(projectVpcEndpoints.vpcEndpointId, id)))
    .orderBy(asc(projects.createdAt), asc(projects.id))
    .all()
    .map((r) => r.id);
}

export function listProjectVpcEndpoints(tx: Tx, projectId: string) {
  return tx
    .select({ vpc_endpoint_id: projectVpcEndpoints.vpcEndpointId, label: projectVpcEndpoints.label })
    .from(projectVpcEndpoints)
    .where(eq(projectVpcEndpoints.projectId, projectId))
    .orderBy(asc(projectVpcEndpoints.vpcEndpointId))
    .all();
}

export function upsertProjectVpcEndpoint(tx: Tx, projectId: string, id: string, label: string): void {
  tx.insert(projectVpcEndpoints)
    .values({ projectId, vpcEndpointId: id, label })
    .onConflictDoUpdate({
      target: [projectVpcEndpoints.projectId, projectVpcEndpoints.vpcEndpointId],
      set: { label },
    })
    .run();
}

export function deleteProjectVpcEndpoint(tx: Tx, projectId: string, id: string): number {
  return tx
    .delete(projectVpcEndpoints)
    .where(and(eq(projectVpcEndpoints.projectId, projectId), eq(projectVpcEndpoints.vpcEndpointId, id)))
    .run().changes;
}

/** A VPC endpoint leaving the organization lifts every restriction of its projects to it. */
export function deleteRestrictions(tx: Tx, orgAccountId: string, id: string): void {
  for (const projectId of restrictedProjects(tx, orgAccountId, id))
    deleteProjectVpcEndpoint(tx, projectId, id);
}

/** A project leaving the organization leaves its VPC restrictions (they name the organization's endpoints). */
export function deleteAllProjectRestrictions(tx: Tx, projectId: string): void {
  tx.delete(projectVpcEndpoints).where(eq(projectVpcEndpoints.projectId, projectId)).run();
}
