import { z } from "@hono/zod-openapi";
import { ProjectParams, ResourceId, Timestamp } from "../schema.js";

export const JWKS = z
  .object({
    id: z.string(),
    project_id: z.string(),
    branch_id: z.string().optional(),
    jwks_url: z.string(),
    provider_name: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    jwt_audience: z.string().optional(),
    role_names: z.array(z.string()).optional(),
  })
  .openapi("JWKS");
export const ProjectJWKSResponse = z.object({ jwks: z.array(JWKS) }).openapi("ProjectJWKSResponse");

const HttpsUrl = z
  .string()
  .max(2048, "must be at most 2048 characters")
  .refine((v) => {
    try {
      return new URL(v).protocol === "https:";
    } catch {
      return false;
    }
  }, "must be an HTTPS URL");

export const AddProjectJWKSRequest = z
  .object({
    jwks_url: HttpsUrl,
    provider_name: z.string().min(1, "must not be empty").max(256),
    branch_id: ResourceId.optional(),
    jwt_audience: z.string().max(256).optional(),
    role_names: z.array(z.string().min(1).max(63)).max(10, "at most 10 roles").optional(),
    skip_role_creation: z.boolean().optional(),
  })
  .openapi("AddProjectJWKSRequest");
export type AddJwksInput = z.infer<typeof AddProjectJWKSRequest>;

export const JwksParams = ProjectParams.extend({
  jwks_id: z
    .string()
    .max(64)
    .openapi({ param: { name: "jwks_id", in: "path" } }),
});
