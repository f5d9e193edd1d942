import { createRouter } from "../../../http/router.js";
import add from "./add-project-jwks.js";
import remove from "./delete-project-jwks.js";
import list from "./get-project-jwks.js";

export default createRouter().route("/", list).route("/", add).route("/", remove);
