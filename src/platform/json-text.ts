/** JSON text known to serialize a `T`: a cached response body, served without serializing again. */
export type JsonText<T> = string & { readonly __json: T };

export function jsonText<T>(value: T): JsonText<T> {
  return JSON.stringify(value) as JsonText<T>;
}

/** The value a JSON text holds, for a reader that needs it as objects (the console's pages). */
export function parseJsonText<T>(text: JsonText<T>): T {
  return JSON.parse(text) as T;
}
