// Cookies of the app: the session (HttpOnly) and the CSRF token (readable by the page, sent back in
// the X-CSRF-Token header: a double submit).
import type { Request, Response } from "express";

export const sessionCookie = "formsvc_session";
export const csrfCookie = "formsvc_csrf";
export const csrfHeader = "x-csrf-token";

/** The cookies of a request by name (the first of repeated names); values URI-decoded when they can be. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (!name || name in cookies) continue;
    try {
      cookies[name] = decodeURIComponent(value);
    } catch {
      cookies[name] = value;
    }
  }
  return cookies;
}

export function cookiesOf(req: Request): Record<string, string> {
  return parseCookies(req.get("cookie"));
}

interface CookieOptions {
  httpOnly: boolean;
  secure: boolean;
  /** Absent: a browser-session cookie; 0: delete it now. */
  expires?: Date;
}

/** One Set-Cookie value: Path=/, SameSite=Lax, HttpOnly and Secure as asked. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, "Path=/", "SameSite=Lax"];
  if (options.expires) {
    parts.push(`Expires=${options.expires.toUTCString()}`);
    if (options.expires.getTime() <= Date.now()) parts.push("Max-Age=0");
  }
  if (options.httpOnly) parts.push("HttpOnly");
  if (options.secure) parts.push("Secure");
  return parts.join("; ");
}

/** Adds a Set-Cookie header, keeping the ones already set on the response. */
export function appendCookie(res: Response, cookie: string): void {
  const current = res.getHeader("Set-Cookie");
  const list = current === undefined ? [] : Array.isArray(current) ? current.map(String) : [String(current)];
  res.setHeader("Set-Cookie", [...list, cookie]);
}
