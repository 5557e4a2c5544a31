// A form's password (issue 31, settings.password): forms keeps its scrypt hash, handed to the gateway with
// the public form. A respondent who gives it gets a pass: a cookie on the form's path, signed with a key
// derived from SECRET_KEY (every replica checks every pass) and bound to the form, its expiry and the
// password's hash, so a changed password voids the passes given for the old one. Tries are limited per
// address and form (access-gate.ts), and checking takes scrypt's time, right or wrong.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { parseCookie, stringifySetCookie } from "cookie";
import type { Request, Response } from "express";
import { verifyPassword } from "@formsvc/platform/password-hash.ts";

const cookieName = "hf_pass";
/** How long a pass lasts: long enough for a long form, short enough that a shared computer forgets it. */
export const passLifetimeMs = 2 * 3600_000;
/** The longest password a form takes (settings.ts); a longer try is wrong without hashing it. */
const maxPasswordLength = 200;

/** The cookie path of a form's pages: its own, so no other form's page gets the pass. */
export function formCookiePath(req: Request, formId: string): string {
  return `${req.baseUrl}/${encodeURIComponent(formId)}`;
}

export function formPasswords(secret?: string) {
  const key = secret ? createHmac("sha256", secret).update("formsvc form password passes").digest() : randomBytes(32);
  const sign = (formId: string, passwordHash: string, expires: string) => createHmac("sha256", key).update(`${formId}\n${expires}\n${passwordHash}`).digest("base64url");

  return {
    /** Whether the request carries a live pass for the form's current password. */
    passed(req: Request, formId: string, passwordHash: string): boolean {
      const value = parseCookie(req.headers.cookie ?? "")[cookieName];
      const [expires, mac] = (value ?? "").split(".");
      if (!expires || !mac || !(Number(expires) > Date.now())) return false;
      const expected = Buffer.from(sign(formId, passwordHash, expires));
      const given = Buffer.from(mac);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },

    /** Checks a try; when right, sets the pass on the response. */
    async enter(req: Request, res: Response, formId: string, passwordHash: string, password: unknown): Promise<boolean> {
      if (typeof password !== "string" || password === "" || password.length > maxPasswordLength) return false;
      if (!(await verifyPassword(password, passwordHash))) return false;
      const expires = String(Date.now() + passLifetimeMs);
      res.append(
        "Set-Cookie",
        stringifySetCookie({
          name: cookieName,
          value: `${expires}.${sign(formId, passwordHash, expires)}`,
          path: formCookiePath(req, formId),
          maxAge: passLifetimeMs / 1000,
          httpOnly: true,
          sameSite: "lax",
          secure: req.secure,
        }),
      );
      return true;
    },
  };
}

export type FormPasswords = ReturnType<typeof formPasswords>;
