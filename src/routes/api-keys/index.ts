import { createRouter } from "../router.js";
import create from "./create.js";
import list from "./list.js";
import revoke from "./revoke.js";

export default createRouter().route("/", list).route("/", create).route("/", revoke);
