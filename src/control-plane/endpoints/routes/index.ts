import { createRouter } from "../../../http/router.js";
import create from "./create-project-endpoint.js";
import del from "./delete-project-endpoint.js";
import get from "./get-project-endpoint.js";
import listBranchEndpoints from "./list-project-branch-endpoints.js";
import list from "./list-project-endpoints.js";
import { restart, start, suspend } from "./start-suspend-restart.js";
import update from "./update-project-endpoint.js";

export default createRouter()
  .route("/", list)
  .route("/", create)
  .route("/", get)
  .route("/", update)
  .route("/", del)
  .route("/", start)
  .route("/", suspend)
  .route("/", restart)
  .route("/", listBranchEndpoints);
