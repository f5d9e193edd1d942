/**
 * The closed list of error codes the emulator answers with, and the one error type every layer
 * throws. Nothing here knows HTTP: `http/errors.ts` maps each code to its status in one table, so a
 * code cannot be invented where it is thrown, and the worker or the seed can throw without
 * speaking HTTP.
 */
export const ERROR_CODES = [
  "INVALID_REQUEST", // malformed or invalid input; the message names the field
  "REQUEST_ABORTED", // the client hung up before its body arrived
  "UNAUTHORIZED", // missing, malformed, unknown or revoked API key
  "FORBIDDEN", // a valid key acting beyond its scope (a project-scoped key on the organization)
  "NOT_FOUND", // unknown id, another account's id, or no such route
  "STORAGE_NOT_ENABLED", // object storage of a branch (its own 404 body, with a `reason`)
  "AI_GATEWAY_NOT_ENABLED", // the AI Gateway of a branch (likewise)
  "METHOD_NOT_ALLOWED",
  "CONFLICT", // e.g. a second read_write endpoint on a branch
  "CLOCK_NOT_MANUAL", // a clock advance while the clock is real
  "PAYLOAD_TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
  "NOT_ACCEPTABLE", // a transfer the destination organization's plan cannot take
  "PRECONDITION_FAILED", // revealing a password of a project that does not store them
  "UNPROCESSABLE", // not allowed on the account's plan
  "PROJECTS_LIMIT_EXCEEDED", // the account has as many projects as its plan allows (Neon's code)
  "BRANCHES_LIMIT_EXCEEDED", // the project has as many branches as the plan allows
  "ENDPOINTS_LIMIT_EXCEEDED", // the project has as many computes as the plan allows
  "ACTIVE_TIME_QUOTA_EXCEEDED", // a start while the project's active_time_seconds quota is used (Neon's reason)
  "COMPUTE_TIME_QUOTA_EXCEEDED", // likewise for compute_time_seconds
  "WRITTEN_DATA_QUOTA_EXCEEDED", // likewise for written_data_bytes
  "DATA_TRANSFER_QUOTA_EXCEEDED", // likewise for data_transfer_bytes
  "LOCKED", // a change to a locked project
  "TOO_MANY_REQUESTS", // beyond the account's request rate (NEON_EMULATOR_RATE_LIMIT=neon)
  "INTERNAL_ERROR",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class EmulatorError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Fields a few public error bodies carry beside code and message (e.g. `reason`). */
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new EmulatorError("INVALID_REQUEST", message);
export const unauthorized = (message: string) => new EmulatorError("UNAUTHORIZED", message);
export const forbidden = (message: string) => new EmulatorError("FORBIDDEN", message);
export const notFound = (message: string) => new EmulatorError("NOT_FOUND", message);
export const conflict = (message: string) => new EmulatorError("CONFLICT", message);
export const notAcceptable = (message: string) => new EmulatorError("NOT_ACCEPTABLE", message);
export const unprocessable = (message: string) => new EmulatorError("UNPROCESSABLE", message);
export const locked = (message: string) => new EmulatorError("LOCKED", message);
export const preconditionFailed = (message: string) => new EmulatorError("PRECONDITION_FAILED", message);
export const clockNotManual = () =>
  new EmulatorError(
    "CLOCK_NOT_MANUAL",
    "the clock is real; start the emulator with NEON_EMULATOR_CLOCK=manual to advance it",
  );
