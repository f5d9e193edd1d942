import { createRouter } from "../../../http/router.js";
import create from "./create-api-key.js";
import list from "./list-api-keys.js";
import revoke from "./revoke-api-key.js";

export default createRouter().route("/", list).route("/", create).route("/", revoke);
