import { createRouter } from "../../../http/router.js";
import db_create from "./create-project-branch-database.js";
import role_create from "./create-project-branch-role.js";
import db_del from "./delete-project-branch-database.js";
import role_del from "./delete-project-branch-role.js";
import db_get from "./get-project-branch-database.js";
import role_get from "./get-project-branch-role.js";
import role_reveal from "./get-project-branch-role-password.js";
import db_list from "./list-project-branch-databases.js";
import role_list from "./list-project-branch-roles.js";
import role_reset from "./reset-project-branch-role-password.js";
import db_update from "./update-project-branch-database.js";

export default createRouter()
  .route("/", role_list)
  .route("/", role_create)
  .route("/", role_get)
  .route("/", role_del)
  .route("/", role_reveal)
  .route("/", role_reset)
  .route("/", db_list)
  .route("/", db_create)
  .route("/", db_get)
  .route("/", db_update)
  .route("/", db_del);
