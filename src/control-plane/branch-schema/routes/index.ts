import { createRouter } from "../../../http/router.js";
import compare from "./compare-schema.js";
import get from "./get-schema.js";

export default createRouter().route("/", get).route("/", compare);
