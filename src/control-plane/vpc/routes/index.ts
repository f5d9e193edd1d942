import { createRouter } from "../../../http/router.js";
import assignOrganizationVpcEndpoint from "./assign-organization-vpc-endpoint.js";
import assignProjectVpcEndpoint from "./assign-project-vpc-endpoint.js";
import deleteOrganizationVpcEndpoint from "./delete-organization-vpc-endpoint.js";
import deleteProjectVpcEndpoint from "./delete-project-vpc-endpoint.js";
import getOrganizationVpcEndpointDetails from "./get-organization-vpc-endpoint-details.js";
import listOrganizationVpcEndpoints from "./list-organization-vpc-endpoints.js";
import listOrganizationVpcEndpointsAllRegions from "./list-organization-vpc-endpoints-all-regions.js";
import listProjectVpcEndpoints from "./list-project-vpc-endpoints.js";

export default createRouter()
  .route("/", listOrganizationVpcEndpointsAllRegions)
  .route("/", listOrganizationVpcEndpoints)
  .route("/", getOrganizationVpcEndpointDetails)
  .route("/", assignOrganizationVpcEndpoint)
  .route("/", deleteOrganizationVpcEndpoint)
  .route("/", listProjectVpcEndpoints)
  .route("/", assignProjectVpcEndpoint)
  .route("/", deleteProjectVpcEndpoint);
