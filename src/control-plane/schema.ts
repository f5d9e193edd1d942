import { z } from "@hono/zod-openapi";

/**
 * Zod primitives shared by the resources' schemas. Each resource's schema.ts holds its request and
 * response schemas; the same objects validate requests, type the services' inputs (z.infer) and
 * generate the served OpenAPI document, so none of the three can drift from the others. Names and
 * shapes follow the public Neon v2 OpenAPI document.
 */

export const ResourceId = z.string().regex(/^[a-z0-9-]{1,60}$/, "must be 1-60 characters of a-z, 0-9 and -");
export const Timestamp = z.string().openapi({ format: "date-time", example: "2025-01-01T00:00:00Z" });
export const StringMap = z.record(z.string(), z.string());

/**
 * A string map a request may carry (Postgres and PgBouncer settings, annotations): at most 100
 * entries, keys of at most 128 characters, values of at most 4096. Stored maps are shown in every
 * list that holds them, so none may grow without bound.
 */
export const BoundedStringMap = z
  .record(z.string(), z.string().max(4096, "values must be at most 4096 characters"))
  .superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length > 100) ctx.addIssue({ code: "custom", message: "must have at most 100 entries" });
    if (keys.some((k) => k.length > 128))
      ctx.addIssue({ code: "custom", message: "keys must be at most 128 characters" });
  });

/** Free-form settings objects are capped by their size as JSON. */
export const SETTINGS_MAX_BYTES = 64 * 1024;
export function settingsWithinSize(value: unknown, ctx: z.RefinementCtx): void {
  if (Buffer.byteLength(JSON.stringify(value)) > SETTINGS_MAX_BYTES)
    ctx.addIssue({ code: "custom", message: `must be at most ${SETTINGS_MAX_BYTES} bytes as JSON` });
}

/**
 * For `.refine(...noNul)`: text Neon keeps in its own Postgres, which stores no NUL character, is
 * refused with one (400) rather than kept.
 */
export const noNul = [(s: string) => !s.includes("\u0000"), "must not contain NUL characters"] as const;

/** A branch's name, as a branch's create or update and a new project's branch give it. */
export const BranchName = z
  .string()
  .min(1)
  .max(256)
  .refine(...noNul);

/**
 * A Postgres identifier (role and database names): Postgres keeps 63 bytes of one (NAMEDATALEN),
 * and cuts a longer name, even inside a character.
 */
export const PgName = z
  .string()
  .min(1, "must not be empty")
  .refine((s) => Buffer.byteLength(s) <= 63, "must be at most 63 bytes in UTF-8 (a Postgres identifier)")
  .openapi({ maxLength: 63 })
  .refine(...noNul)
  // A URL's path takes `.` and `..` (escaped or not) as steps, so no API path could name it.
  .refine((s) => s !== "." && s !== "..", "must not be . or .. (no URL path can name it)");

/**
 * Names the API gives no new role (Neon's protected role names: any starting with `pg`, and these;
 * Postgres itself reserves `pg_*`, `public` and `none`) or no new database (every cluster has
 * these): refused when asked for, rather than failing on the compute later (a change made while
 * it is stopped is applied when it starts).
 */
const RESERVED_ROLES = new Set(["public", "none", "cloud_admin", "neon_superuser", "zenith_admin"]);
const RESERVED_DATABASES = new Set(["postgres", "template0", "template1"]);

export const RoleName = PgName.refine((s) => !s.startsWith("pg") && !RESERVED_ROLES.has(s), {
  error: (issue) => `role name "${String(issue.input)}" is reserved`,
});
export const DatabaseName = PgName.refine((s) => !RESERVED_DATABASES.has(s), {
  error: (issue) => `database name "${String(issue.input)}" is reserved`,
});

/** Integer query parameter within [min, max], with a message naming the bounds. */
export function intQuery(min: number, max: number) {
  return z.coerce
    .number({ message: "must be an integer" })
    .int("must be an integer")
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`);
}

export const BoolQuery = z.enum(["true", "false"]).transform((v) => v === "true");

// Path parameters

export const OrgParams = z.object({
  org_id: ResourceId.openapi({ param: { name: "org_id", in: "path" } }),
});
export const ProjectParams = z.object({
  project_id: z.string().openapi({ param: { name: "project_id", in: "path" } }),
});
export const BranchParams = ProjectParams.extend({
  branch_id: z.string().openapi({ param: { name: "branch_id", in: "path" } }),
});
export const EndpointParams = ProjectParams.extend({
  endpoint_id: z.string().openapi({ param: { name: "endpoint_id", in: "path" } }),
});
