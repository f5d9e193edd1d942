import { createRouter } from "../../../http/router.js";
import grant from "./grant-permission-to-project.js";
import list from "./list-project-permissions.js";
import revoke from "./revoke-permission-from-project.js";

export default createRouter().route("/", list).route("/", grant).route("/", revoke);
