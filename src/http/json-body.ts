import type { MiddlewareHandler } from "hono";
import { badRequest } from "../errors.js";

/** Deeper than any body the API takes; far below what JSON.stringify can write back without overflowing its stack. */
export const MAX_JSON_DEPTH = 64;

const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number) => u >= 0xdc00 && u <= 0xdfff;
const hex = (u: number) => `\\u${u.toString(16).padStart(4, "0")}`;

/**
 * What makes JSON text unfit to store, if anything: nesting deeper than `maxDepth`, or a string
 * with an unpaired UTF-16 surrogate (written `\ud800` in JSON). SQLite stores the latter as
 * invalid UTF-8 that reads back as U+FFFD: the stored name differs from the one acknowledged,
 * and two different names can read back the same. Brackets inside strings do not count.
 */
export function jsonTextProblem(text: string, maxDepth: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isHigh(c) || isLow(c)) {
      if (isHigh(c) && isLow(text.charCodeAt(i + 1))) i++;
      else return `a string holds an unpaired UTF-16 surrogate ${hex(c)}`;
    } else if (inString) {
      if (c === 0x22) inString = false;
      else if (c === 0x5c) {
        // An escape: \" \\ \n ... skip the escaped character; a \uXXXX is checked for surrogates.
        if (text.charCodeAt(i + 1) !== 0x75) i++;
        else {
          const unit = Number.parseInt(text.slice(i + 2, i + 6), 16);
          const next = text.startsWith("\\u", i + 6)
            ? Number.parseInt(text.slice(i + 8, i + 12), 16)
            : Number.NaN;
          if (isHigh(unit) && isLow(next)) i += 11;
          else if (isHigh(unit) || isLow(unit))
            return `a string holds an unpaired UTF-16 surrogate ${hex(unit)}`;
          else i += 5;
        }
      }
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return `nested deeper than ${maxDepth} levels`;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/**
 * Refuses, with a 400, a body nested deeper than MAX_JSON_DEPTH (free-form fields such as
 * endpoint and project `settings` are stored with JSON.stringify, which overflows the stack a
 * few thousand levels down: a 500) or holding an unpaired surrogate (stored mangled).
 */
export const jsonBodyGuard: MiddlewareHandler = async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    const problem = jsonTextProblem(await c.req.text(), MAX_JSON_DEPTH);
    if (problem) throw badRequest(`invalid request body: ${problem}`);
  }
  await next();
};
