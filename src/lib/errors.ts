/** The one error type the API renders. Repositories throw it; app.onError turns it into the Neon error body. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 423 | 500,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, "INVALID_REQUEST", message);
export const unauthorized = (message: string) => new ApiError(401, "UNAUTHORIZED", message);
export const notFound = (message: string) => new ApiError(404, "NOT_FOUND", message);
export const conflict = (message: string) => new ApiError(409, "CONFLICT", message);
export const unprocessable = (message: string) => new ApiError(422, "UNPROCESSABLE", message);
export const locked = (message: string) => new ApiError(423, "LOCKED", message);
