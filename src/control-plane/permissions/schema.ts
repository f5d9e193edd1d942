import { z } from "@hono/zod-openapi";
import { ProjectParams, Timestamp } from "../schema.js";

export const ProjectPermission = z
  .object({
    id: z.string(),
    granted_to_email: z.string(),
    granted_at: Timestamp,
    revoked_at: Timestamp.optional(),
  })
  .openapi("ProjectPermission");
export const ProjectPermissions = z
  .object({ project_permissions: z.array(ProjectPermission) })
  .openapi("ProjectPermissions");
export const GrantPermissionToProjectRequest = z
  .object({ email: z.email("must be an email address").max(256, "must be at most 256 characters") })
  .openapi("GrantPermissionToProjectRequest");
export const PermissionParams = ProjectParams.extend({
  permission_id: z
    .string()
    .max(64)
    .openapi({ param: { name: "permission_id", in: "path" } }),
});
