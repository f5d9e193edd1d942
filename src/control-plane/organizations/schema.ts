import { z } from "@hono/zod-openapi";
import { OrgParams, ResourceId, Timestamp } from "../schema.js";
import { MEMBER_ROLES } from "./table.js";

export const MemberRole = z.enum(MEMBER_ROLES).openapi("MemberRole");
const Email = z.email("must be an email address").max(256, "must be at most 256 characters");

export const Member = z
  .object({
    id: z.string(),
    user_id: z.string(),
    org_id: z.string(),
    role: MemberRole,
    joined_at: Timestamp.optional(),
  })
  .openapi("Member");
export const MemberWithUser = z
  .object({ member: Member, user: z.object({ email: z.string() }) })
  .openapi("MemberWithUser");
export const CursorPagination = z
  .object({ next: z.string().optional(), sort_by: z.string().optional(), sort_order: z.string().optional() })
  .openapi("CursorPagination");
export const OrganizationMembersResponse = z.object({
  members: z.array(MemberWithUser),
  pagination: CursorPagination.optional(),
});

export const MembersQuery = z.object({
  sort_by: z.enum(["email", "role", "joined_at"]).default("joined_at"),
  sort_order: z.enum(["asc", "desc"]).default("desc"),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});
export type MembersInput = z.infer<typeof MembersQuery>;

export const MemberParams = OrgParams.extend({
  member_id: z.uuid("must be a member id (a UUID)").openapi({ param: { name: "member_id", in: "path" } }),
});
export const OrganizationMemberUpdateRequest = z
  .object({ role: MemberRole })
  .openapi("OrganizationMemberUpdateRequest");

export const Invitation = z
  .object({
    id: z.string(),
    email: z.string(),
    org_id: z.string(),
    invited_by: z.string(),
    invited_at: Timestamp,
    role: MemberRole,
  })
  .openapi("Invitation");
export const OrganizationInvitationsResponse = z
  .object({ invitations: z.array(Invitation) })
  .openapi("OrganizationInvitationsResponse");
export const OrganizationInvitesCreateRequest = z
  .object({
    invitations: z
      .array(z.object({ email: Email, role: MemberRole }))
      .min(1, "must name at least one invitation")
      .max(100, "at most 100 invitations at once"),
  })
  .openapi("OrganizationInvitesCreateRequest");

export const TransferProjectsToOrganizationRequest = z
  .object({
    destination_org_id: ResourceId,
    project_ids: z
      .array(ResourceId)
      .min(1, "must name at least one project")
      .max(400, "at most 400 projects"),
  })
  .openapi("TransferProjectsToOrganizationRequest");
export const EmptyResponse = z.object({}).openapi("EmptyResponse");
export const SourceOrgParams = z.object({
  source_org_id: ResourceId.openapi({ param: { name: "source_org_id", in: "path" } }),
});

export const SpendingLimitResponse = z
  .object({ spending_limit_cents: z.number().int().nullable() })
  .openapi("SpendingLimitResponse");
export const SpendingLimitUpdateRequest = z
  .object({
    spending_limit_cents: z
      .number({ message: "must be a positive whole number of cents" })
      .int("must be a positive whole number of cents")
      .min(1, "must be positive (DELETE the limit to remove it)")
      .max(Number.MAX_SAFE_INTEGER),
  })
  .openapi("SpendingLimitUpdateRequest");

export const TransferRequestParams = z.object({
  project_id: ResourceId.openapi({ param: { name: "project_id", in: "path" } }),
  request_id: ResourceId.openapi({ param: { name: "request_id", in: "path" } }),
});
export const ProjectTransferRequestCreate = z.object({
  ttl_seconds: z
    .number()
    .int("must be a whole number of seconds")
    .min(60, "must be at least 60 seconds")
    .max(2_592_000, "must be at most 30 days")
    .optional(),
});
export const ProjectTransferRequestResponse = z
  .object({ id: z.string(), project_id: z.string(), created_at: Timestamp, expires_at: Timestamp })
  .openapi("ProjectTransferRequestResponse");
export const ProjectTransferRequestAccept = z.object({ org_id: ResourceId.optional() });
