import { z } from "@hono/zod-openapi";
import { noNul, OrgParams, ResourceId, Timestamp } from "../schema.js";

export const ApiKeyCreateRequest = z
  .object({
    key_name: z
      .string()
      .min(1, "must not be empty")
      .max(64, "must be at most 64 characters")
      .refine(...noNul),
  })
  .openapi("ApiKeyCreateRequest");
export const ApiKeyCreateResponse = z
  .object({
    id: z.number().int(),
    key: z.string(),
    name: z.string(),
    created_at: Timestamp,
    created_by: z.string(),
  })
  .openapi("ApiKeyCreateResponse");
export const ApiKeysListResponseItem = z
  .object({
    id: z.number().int(),
    name: z.string(),
    created_at: Timestamp,
    created_by: z.object({ id: z.string(), name: z.string(), image: z.string() }),
    last_used_at: Timestamp.nullable(),
    last_used_from_addr: z.string(),
  })
  .openapi("ApiKeysListResponseItem");
export const ApiKeyRevokeResponse = z
  .object({
    id: z.number().int(),
    name: z.string(),
    created_at: Timestamp,
    created_by: z.string(),
    last_used_at: Timestamp.nullable(),
    last_used_from_addr: z.string(),
    revoked: z.boolean(),
  })
  .openapi("ApiKeyRevokeResponse");

/**
 * A key id as Neon writes it: a canonical positive integer. Spellings Number() would also read
 * (`0x36`, `54e0`, `+54`, ` 54`, `054`) name no key: a 400, never another key.
 */
export const KeyIdParams = z.object({
  key_id: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, "must be a positive integer key id")
    .transform(Number)
    .pipe(z.number().max(Number.MAX_SAFE_INTEGER, "must be a positive integer key id"))
    .openapi({ param: { name: "key_id", in: "path" }, type: "integer" }),
});

/** Organization keys: the personal shapes, with `project_id` on a key made for one project. */
const ProjectScope = { project_id: ResourceId.optional() };
export const OrgApiKeyCreateRequest =
  ApiKeyCreateRequest.extend(ProjectScope).openapi("OrgApiKeyCreateRequest");
export const OrgApiKeyCreateResponse =
  ApiKeyCreateResponse.extend(ProjectScope).openapi("OrgApiKeyCreateResponse");
export const OrgApiKeysListResponseItem = ApiKeysListResponseItem.extend(ProjectScope).openapi(
  "OrgApiKeysListResponseItem",
);
export const OrgApiKeyRevokeResponse =
  ApiKeyRevokeResponse.extend(ProjectScope).openapi("OrgApiKeyRevokeResponse");
export const OrgKeyIdParams = OrgParams.extend(KeyIdParams.shape);
