import { createRouter } from "../../../http/router.js";
import schedule from "./backup-schedule.js";
import create from "./create-snapshot.js";
import del from "./delete-snapshot.js";
import finalize from "./finalize-restore.js";
import list from "./list-snapshots.js";
import restore from "./restore-snapshot.js";
import update from "./update-snapshot.js";

export default createRouter()
  .route("/", create)
  .route("/", list)
  .route("/", update)
  .route("/", del)
  .route("/", restore)
  .route("/", finalize)
  .route("/", schedule);
