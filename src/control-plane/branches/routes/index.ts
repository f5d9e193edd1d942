import { createRouter } from "../../../http/router.js";
import create from "./create-project-branch.js";
import del from "./delete-project-branch.js";
import get from "./get-project-branch.js";
import list from "./list-project-branches.js";
import setDefault from "./set-default-project-branch.js";
import update from "./update-project-branch.js";

export default createRouter()
  .route("/", list)
  .route("/", create)
  .route("/", get)
  .route("/", update)
  .route("/", del)
  .route("/", setDefault);
