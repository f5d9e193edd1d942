import { createRouter } from "../../../http/router.js";
import count from "./count-project-branches.js";
import create from "./create-project-branch.js";
import del from "./delete-project-branch.js";
import get from "./get-project-branch.js";
import list from "./list-project-branches.js";
import setDefault from "./set-default-project-branch.js";
import update from "./update-project-branch.js";

// GET /projects/{p}/branches/count is answered by GET …/branches/{branch_id} (see count-project-branches.ts).
export default createRouter()
  .route("/", list)
  .route("/", count)
  .route("/", create)
  .route("/", get)
  .route("/", update)
  .route("/", del)
  .route("/", setDefault);
