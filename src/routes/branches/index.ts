import { createRouter } from "../router.js";
import create from "./create.js";
import del from "./delete.js";
import get from "./get.js";
import list from "./list.js";
import listEndpoints from "./list-endpoints.js";
import setDefault from "./set-default.js";
import update from "./update.js";

export default createRouter()
  .route("/", list)
  .route("/", create)
  .route("/", get)
  .route("/", update)
  .route("/", del)
  .route("/", setDefault)
  .route("/", listEndpoints);
