import { createRouter } from "../../../http/router.js";
import create from "./create-project.js";
import del from "./delete-project.js";
import preload from "./get-available-preload-libraries.js";
import get from "./get-project.js";
import list from "./list-projects.js";
import listShared from "./list-shared-projects.js";
import recover from "./recover-project.js";
import update from "./update-project.js";

// GET /projects/shared is answered by GET /projects/{project_id} (see list-shared-projects.ts).
export default createRouter()
  .route("/", list)
  .route("/", listShared)
  .route("/", create)
  .route("/", get)
  .route("/", update)
  .route("/", del)
  .route("/", preload)
  .route("/", recover);
