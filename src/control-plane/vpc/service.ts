/**
 * Private Networking as records: VPC endpoints assigned to the organization per region (state
 * `accepted` at once), and project restrictions to them. No network effect in the emulator.
 */
import type { Ctx } from "../../context.js";
import { badRequest, notFound } from "../../errors.js";
import { requireOrganization, requireProject, requireWritableProject } from "../access.js";
import { REGION_IDS } from "../regions/rules.js";
import {
  deleteProjectVpcEndpoint,
  deleteRestrictions,
  findOrgVpcEndpoint,
  listOrgVpcEndpoints,
  listProjectVpcEndpoints,
  markOrgVpcEndpointDeleted,
  type OrgVpcEndpointRow,
  restrictedProjects,
  upsertOrgVpcEndpoint,
  upsertProjectVpcEndpoint,
} from "./store.js";

function requireRegion(regionId: string): void {
  if (!REGION_IDS.includes(regionId)) throw notFound(`region ${regionId} not found`);
  if (regionId.startsWith("azure-"))
    throw badRequest(`VPC endpoints are not supported in Azure regions (${regionId})`);
}

function requireAssigned(
  tx: Ctx["db"],
  accountId: string,
  regionId: string | null,
  id: string,
): OrgVpcEndpointRow {
  const row = findOrgVpcEndpoint(tx, accountId, id);
  if (!row || row.deletedAt !== null || (regionId !== null && row.regionId !== regionId))
    throw notFound(`VPC endpoint ${id} not found`);
  return row;
}

export function listOrgVpcEndpointsAllRegions(ctx: Ctx, accountId: string, orgId: string) {
  requireOrganization(ctx.db, accountId, orgId);
  return {
    endpoints: listOrgVpcEndpoints(ctx.db, accountId).map((r) => ({
      vpc_endpoint_id: r.vpcEndpointId,
      label: r.label,
      region_id: r.regionId,
    })),
  };
}

export function listOrgVpcEndpointsInRegion(ctx: Ctx, accountId: string, orgId: string, regionId: string) {
  requireOrganization(ctx.db, accountId, orgId);
  requireRegion(regionId);
  return {
    endpoints: listOrgVpcEndpoints(ctx.db, accountId, regionId).map((r) => ({
      vpc_endpoint_id: r.vpcEndpointId,
      label: r.label,
    })),
  };
}

export function getOrgVpcEndpoint(ctx: Ctx, accountId: string, orgId: string, regionId: string, id: string) {
  requireOrganization(ctx.db, accountId, orgId);
  requireRegion(regionId);
  const row = requireAssigned(ctx.db, accountId, regionId, id);
  const restricted = restrictedProjects(ctx.db, accountId, id);
  return {
    vpc_endpoint_id: row.vpcEndpointId,
    label: row.label,
    state: "accepted",
    num_restricted_projects: restricted.length,
    example_restricted_projects: restricted.slice(0, 3),
  };
}

/** Assigns (or relabels) a VPC endpoint; one deleted from the organization cannot come back. */
export function assignOrgVpcEndpoint(
  ctx: Ctx,
  accountId: string,
  orgId: string,
  regionId: string,
  id: string,
  label: string,
) {
  return ctx.db.transaction((tx) => {
    requireOrganization(tx, accountId, orgId);
    requireRegion(regionId);
    const existing = findOrgVpcEndpoint(tx, accountId, id);
    if (existing?.deletedAt != null)
      throw badRequest(`VPC endpoint ${id} was deleted from organization ${orgId} and cannot be added back`);
    if (existing && existing.regionId !== regionId)
      throw badRequest(`VPC endpoint ${id} is assigned in region ${existing.regionId}, not ${regionId}`);
    upsertOrgVpcEndpoint(tx, {
      orgAccountId: accountId,
      vpcEndpointId: id,
      regionId,
      label,
      createdAt: existing?.createdAt ?? ctx.clock.now(accountId),
      deletedAt: null,
    });
    return {};
  });
}

export function deleteOrgVpcEndpoint(
  ctx: Ctx,
  accountId: string,
  orgId: string,
  regionId: string,
  id: string,
) {
  return ctx.db.transaction((tx) => {
    requireOrganization(tx, accountId, orgId);
    requireRegion(regionId);
    requireAssigned(tx, accountId, regionId, id);
    deleteRestrictions(tx, accountId, id);
    markOrgVpcEndpointDeleted(tx, accountId, id, ctx.clock.now(accountId));
    return {};
  });
}

export function listProjectRestrictions(ctx: Ctx, accountId: string, projectId: string) {
  requireProject(ctx.db, accountId, projectId);
  return { endpoints: listProjectVpcEndpoints(ctx.db, projectId) };
}

/** A restriction needs the VPC endpoint assigned to the project's organization, in its region. */
export function assignProjectVpcEndpoint(
  ctx: Ctx,
  accountId: string,
  projectId: string,
  id: string,
  label: string,
) {
  return ctx.db.transaction((tx) => {
    const project = requireWritableProject(tx, accountId, projectId);
    const assigned = findOrgVpcEndpoint(tx, project.accountId, id);
    if (!assigned || assigned.deletedAt !== null)
      throw badRequest(
        `VPC endpoint ${id} is not assigned to the project's organization; assign it there first`,
      );
    if (assigned.regionId !== project.regionId)
      throw badRequest(
        `VPC endpoint ${id} is in region ${assigned.regionId}; project ${projectId} is in ${project.regionId}`,
      );
    upsertProjectVpcEndpoint(tx, projectId, id, label);
    return {};
  });
}

export function deleteProjectRestriction(ctx: Ctx, accountId: string, projectId: string, id: string) {
  return ctx.db.transaction((tx) => {
    requireWritableProject(tx, accountId, projectId);
    if (deleteProjectVpcEndpoint(tx, projectId, id) === 0)
      throw notFound(`VPC endpoint ${id} is not a restriction of project ${projectId}`);
    return {};
  });
}
