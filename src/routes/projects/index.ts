import { createRouter } from "../router.js";
import connectionUri from "./connection-uri.js";
import create from "./create.js";
import del from "./delete.js";
import get from "./get.js";
import list from "./list.js";
import listShared from "./list-shared.js";
import update from "./update.js";

// GET /projects/shared is answered by GET /projects/{project_id} (see list-shared.ts).
export default createRouter()
  .route("/", list)
  .route("/", listShared)
  .route("/", create)
  .route("/", get)
  .route("/", update)
  .route("/", del)
  .route("/", connectionUri);
