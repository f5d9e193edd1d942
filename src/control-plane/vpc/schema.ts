import { z } from "@hono/zod-openapi";
import { OrgParams, ProjectParams } from "../schema.js";

const VpcEndpointId = z
  .string()
  .regex(
    /^[A-Za-z0-9-]{1,64}$/,
    "must be a VPC endpoint id (letters, digits and -, e.g. vpce-0123456789abcdef0)",
  );

export const VPCEndpoint = z
  .object({ vpc_endpoint_id: z.string(), label: z.string() })
  .openapi("VPCEndpoint");
export const VPCEndpointsResponse = z
  .object({ endpoints: z.array(VPCEndpoint) })
  .openapi("VPCEndpointsResponse");
export const VPCEndpointWithRegion = VPCEndpoint.extend({ region_id: z.string() }).openapi(
  "VPCEndpointWithRegion",
);
export const VPCEndpointsWithRegionResponse = z
  .object({ endpoints: z.array(VPCEndpointWithRegion) })
  .openapi("VPCEndpointsWithRegionResponse");
export const VPCEndpointDetails = z
  .object({
    vpc_endpoint_id: z.string(),
    label: z.string(),
    state: z.string(),
    num_restricted_projects: z.number().int(),
    example_restricted_projects: z.array(z.string()),
  })
  .openapi("VPCEndpointDetails");
export const VPCEndpointAssignment = z
  .object({ label: z.string().max(256, "must be at most 256 characters") })
  .openapi("VPCEndpointAssignment");

export const OrgRegionParams = OrgParams.extend({
  region_id: z
    .string()
    .max(64)
    .openapi({ param: { name: "region_id", in: "path" } }),
});
export const OrgVpcEndpointParams = OrgRegionParams.extend({
  vpc_endpoint_id: VpcEndpointId.openapi({ param: { name: "vpc_endpoint_id", in: "path" } }),
});
export const ProjectVpcEndpointParams = ProjectParams.extend({
  vpc_endpoint_id: VpcEndpointId.openapi({ param: { name: "vpc_endpoint_id", in: "path" } }),
});
