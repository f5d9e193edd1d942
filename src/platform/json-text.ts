/** JSON text known to serialize a `T`: a cached response body, served without serializing again. */
export type JsonText<T> = string & { readonly __json: T };

export function jsonText<T>(value: T): JsonText<T> {
  return JSON.stringify(value) as JsonText<T>;
}
