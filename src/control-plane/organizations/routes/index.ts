import { createRouter } from "../../../http/router.js";
import createOrganizationInvitations from "./create-organization-invitations.js";
import getOrganizationInvitations from "./get-organization-invitations.js";
import getOrganizationMember from "./get-organization-member.js";
import listOrganizationMembers from "./list-organization-members.js";
import removeOrganizationMember from "./remove-organization-member.js";
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
  .route("/", transferProjectsFromUserToOrg);
