import { randomBytes } from "node:crypto";

/**
 * Forms sent already. Every console form carries a token of its own (`_once`, beside the CSRF
 * token); a form sent again with it (a reload of the page its POST answered, Back and resend, a
 * second click before the first answer) is refused instead of done twice: a second password
 * reset, a second API key, a statement run again. Kept in memory per session, for a day.
 */
const sent = new Map<string, Map<string, number>>();

/** How long a sent form's token is remembered, and how many a session keeps. */
const KEEP_MS = 24 * 60 * 60 * 1000;
const PER_SESSION = 1000;

/** A new form's token. */
export const onceToken = () => randomBytes(12).toString("base64url");

/** Takes the form's token for this session: false when it was taken already (the form was sent before). */
export function takeOnce(session: string, token: string, now: number): boolean {
  let tokens = sent.get(session);
  if (!tokens) {
    // A session seen for the first time: those whose last form is older than a day (sessions
    // that expired without a sign-out) are dropped, so the map holds only sessions in use.
    for (const [other, kept] of sent)
      if ([...kept.values()].every((t) => now - t >= KEEP_MS)) sent.delete(other);
    tokens = new Map();
    sent.set(session, tokens);
  }
  const at = tokens.get(token);
  if (at !== undefined && now - at < KEEP_MS) return false;
  tokens.set(token, now);
  if (tokens.size > PER_SESSION) {
    for (const [old, t] of tokens) if (tokens.size > PER_SESSION || now - t >= KEEP_MS) tokens.delete(old);
  }
  return true;
}

/** Gives a token back: the form was answered with a question (a confirmation page), not done. */
export function giveOnceBack(session: string, token: string): void {
  sent.get(session)?.delete(token);
}

/** Forgets a session's tokens (it ended). */
export function forgetOnce(session: string): void {
  sent.delete(session);
}
