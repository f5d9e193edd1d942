import { createRouter } from "../../../http/router.js";
import perBranchV2 from "./get-consumption-history-per-branch-v2.js";
import perProject from "./get-consumption-history-per-project.js";
import perProjectV2 from "./get-consumption-history-per-project-v2.js";

export default createRouter().route("/", perProject).route("/", perProjectV2).route("/", perBranchV2);
