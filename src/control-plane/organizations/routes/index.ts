import { createRouter } from "../../../http/router.js";
import acceptProjectTransferRequest from "./accept-project-transfer-request.js";
import createOrganizationInvitations from "./create-organization-invitations.js";
import createProjectTransferRequest from "./create-project-transfer-request.js";
import deleteOrganizationSpendingLimit from "./delete-organization-spending-limit.js";
import getOrganizationInvitations from "./get-organization-invitations.js";
import getOrganizationMember from "./get-organization-member.js";
import getOrganizationSpendingLimit from "./get-organization-spending-limit.js";
import listOrganizationMembers from "./list-organization-members.js";
import removeOrganizationMember from "./remove-organization-member.js";
import setOrganizationSpendingLimit from "./set-organization-spending-limit.js";
import transferProjectsFromOrgToOrg from "./transfer-projects-from-org-to-org.js";
import transferProjectsFromUserToOrg from "./transfer-projects-from-user-to-org.js";
import updateOrganizationMember from "./update-organization-member.js";

export default createRouter()
  .route("/", listOrganizationMembers)
  .route("/", getOrganizationMember)
  .route("/", updateOrganizationMember)
  .route("/", removeOrganizationMember)
  .route("/", getOrganizationInvitations)
  .route("/", createOrganizationInvitations)
  .route("/", transferProjectsFromOrgToOrg)
  .route("/", transferProjectsFromUserToOrg)
  .route("/", getOrganizationSpendingLimit)
  .route("/", setOrganizationSpendingLimit)
  .route("/", deleteOrganizationSpendingLimit)
  .route("/", createProjectTransferRequest)
  .route("/", acceptProjectTransferRequest);
