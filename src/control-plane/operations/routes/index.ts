import { createRouter } from "../../../http/router.js";
import get from "./get-project-operation.js";
import list from "./list-project-operations.js";

export default createRouter().route("/", list).route("/", get);
