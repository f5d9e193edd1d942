import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses } from "../../http/router.js";
import { caCertificate } from "../service.js";

const route = createRoute({
  tags: ["Emulator"],
  method: "get",
  path: "/ca.pem",
  summary:
    "The certificate authority of the Postgres front door's TLS certificate (PEM, no auth): trust it to verify (sslrootcert, NODE_EXTRA_CA_CERTS)",
  responses: {
    200: { description: "The CA certificate", content: { "application/x-pem-file": { schema: z.string() } } },
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.body(caCertificate(c.var.ctx), 200, { "content-type": "application/x-pem-file" }),
);
