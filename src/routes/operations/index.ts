import { createRouter } from "../router.js";
import get from "./get.js";
import list from "./list.js";

export default createRouter().route("/", list).route("/", get);
