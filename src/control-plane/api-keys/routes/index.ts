import { createRouter } from "../../../http/router.js";
import create from "./create-api-key.js";
import createOrg from "./create-org-api-key.js";
import list from "./list-api-keys.js";
import listOrg from "./list-org-api-keys.js";
import revoke from "./revoke-api-key.js";
import revokeOrg from "./revoke-org-api-key.js";

export default createRouter()
  .route("/", list)
  .route("/", create)
  .route("/", revoke)
  .route("/", listOrg)
  .route("/", createOrg)
  .route("/", revokeOrg);
