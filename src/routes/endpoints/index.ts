import { createRouter } from "../router.js";
import create from "./create.js";
import del from "./delete.js";
import get from "./get.js";
import list from "./list.js";
import { restart, start, suspend } from "./state.js";
import update from "./update.js";

export default createRouter()
  .route("/", list)
  .route("/", create)
  .route("/", get)
  .route("/", update)
  .route("/", del)
  .route("/", start)
  .route("/", suspend)
  .route("/", restart);
