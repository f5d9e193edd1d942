import { createRoute, z } from "@hono/zod-openapi";
import { DEFAULT_REGION, REGIONS } from "../../domain/regions.js";
import { authDetails, currentOrganizations, currentUser } from "../../repos/accounts.js";
import { createRouter, errorResponses, jsonResponse, security } from "../router.js";

const common = { tags: ["Users"], security };

const me = createRoute({
  ...common,
  method: "get",
  path: "/users/me",
  operationId: "getCurrentUserInfo",
  summary: "The user the API key belongs to",
  responses: {
    200: jsonResponse(
      z.object({
        active_seconds_limit: z.number().int(),
        auth_accounts: z.array(
          z.object({
            email: z.string(),
            image: z.string(),
            login: z.string(),
            name: z.string(),
            provider: z.string(),
          }),
        ),
        email: z.string(),
        id: z.string(),
        image: z.string(),
        login: z.string(),
        name: z.string(),
        last_name: z.string(),
        projects_limit: z.number().int(),
        branches_limit: z.number().int(),
        max_autoscaling_limit: z.number(),
        plan: z.string(),
      }),
      "The current user",
    ),
    ...errorResponses,
  },
});

const orgs = createRoute({
  ...common,
  method: "get",
  path: "/users/me/organizations",
  operationId: "getCurrentUserOrganizations",
  summary: "The organizations of the current user (one per emulated account)",
  responses: {
    200: jsonResponse(
      z.object({
        organizations: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            handle: z.string(),
            plan: z.string(),
            created_at: z.string(),
            managed_by: z.string(),
            updated_at: z.string(),
          }),
        ),
      }),
      "Organizations",
    ),
    ...errorResponses,
  },
});

const auth = createRoute({
  ...common,
  tags: ["Auth"],
  method: "get",
  path: "/auth",
  operationId: "getAuthDetails",
  summary: "How the request was authenticated",
  responses: {
    200: jsonResponse(
      z.object({
        account_id: z.string(),
        auth_method: z.literal("api_key_org"),
        auth_data: z.string().optional(),
      }),
      "Authentication details",
    ),
    ...errorResponses,
  },
});

const regions = createRoute({
  ...common,
  tags: ["Region"],
  method: "get",
  path: "/regions",
  operationId: "getActiveRegions",
  summary: "Regions projects can be created in",
  request: { query: z.object({ org_id: z.string().optional() }) },
  responses: {
    200: jsonResponse(
      z.object({
        regions: z.array(
          z.object({
            region_id: z.string(),
            name: z.string(),
            default: z.boolean(),
            geo_lat: z.string(),
            geo_long: z.string(),
          }),
        ),
      }),
      "Regions",
    ),
    ...errorResponses,
  },
});

export default createRouter()
  .openapi(me, (c) => c.json(currentUser(c.var.ctx, c.var.principal.accountId), 200))
  .openapi(orgs, (c) => c.json(currentOrganizations(c.var.ctx, c.var.principal.accountId), 200))
  .openapi(auth, (c) => c.json(authDetails(c.var.ctx, c.var.principal.accountId), 200))
  .openapi(regions, (c) =>
    c.json({ regions: REGIONS.map((r) => ({ ...r, default: r.region_id === DEFAULT_REGION })) }, 200),
  );
