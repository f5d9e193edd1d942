import type { ErrorObject } from "ajv";

/**
 * The ONE list of places where the emulator knowingly differs from the public Neon v2 OpenAPI
 * document, each because the spec (../shared/spec/control-plane-api.md, which wins where it
 * speaks) demands it. The contract check lets a schema error pass only when an entry here
 * matches it; every other mismatch fails the e2e suite.
 */
export interface Deviation {
  id: string;
  /** The spec line that demands the behaviour, quoted. */
  spec: string;
  /** How the emulator's behaviour differs from the public document. */
  difference: string;
  /** True when this deviation explains the given schema error of the given operation's response. */
  matches(operationId: string, error: ErrorObject, body: unknown): boolean;
}

export const DEVIATIONS: readonly Deviation[] = [
  {
    id: "operation-action-delete-tenant",
    spec: "spec/control-plane-api.md, Operation action values: `| delete_tenant | deletes stored data when a project is deleted |`",
    difference:
      "`delete_tenant` is not a value of the public OperationAction enum; the emulator records it for project deletion",
    matches: (_operationId, error) =>
      error.keyword === "enum" && /\/action$/.test(error.instancePath) && error.data === "delete_tenant",
  },
  {
    id: "endpoint-delete-empty-operations",
    spec: "spec/control-plane-api.md, Compute endpoint transitions: `| any | DELETE endpoint | | endpoint removed | response carries the endpoint as it was and an empty operations array |`",
    difference:
      "the real service answers DELETE of an endpoint with the operations that remove it; the emulator answers with an empty `operations` array (the public schema allows an empty array, so this is semantic only and never excuses a schema error)",
    matches: () => false,
  },
];
