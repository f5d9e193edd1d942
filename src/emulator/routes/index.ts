/** Emulator-only routes (never under /api/v2). All but health need an API key. */
import { createRouter } from "../../http/router.js";
import advanceClock from "./advance-clock.js";
import armFault from "./arm-fault.js";
import clearFaults from "./clear-faults.js";
import connectEndpoint from "./connect-endpoint.js";
import createAccount from "./create-account.js";
import createConsoleLink from "./create-console-link.js";
import getCa from "./get-ca.js";
import getClock from "./get-clock.js";
import health from "./health.js";
import listFaults from "./list-faults.js";
import resetAccount from "./reset-account.js";

export default createRouter()
  .route("/", health)
  .route("/", getCa)
  .route("/", getClock)
  .route("/", advanceClock)
  .route("/", connectEndpoint)
  .route("/", armFault)
  .route("/", listFaults)
  .route("/", clearFaults)
  .route("/", resetAccount)
  .route("/", createAccount)
  .route("/", createConsoleLink);
