import { createRouter } from "../../../http/router.js";
import auth from "./get-auth-details.js";
import me from "./get-current-user-info.js";
import orgs from "./get-current-user-organizations.js";
import org from "./get-organization.js";

export default createRouter().route("/", me).route("/", orgs).route("/", org).route("/", auth);
