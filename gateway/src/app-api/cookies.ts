// Cookies of the app: the session (HttpOnly) and the CSRF token (readable by the page, sent back in
// the X-CSRF-Token header: a double submit), parsed and written with the `cookie` package.
//
// Cookies are not isolated by port (nor, without the __Host- prefix, by path or scheme): a page served
// from another port of the same host can set `formsvc_session` with `Path=/app`, which the browser then
// sends before ours (cookie tossing). So on https the names carry the `__Host-` prefix (Secure, Path=/,
// no Domain: no other path, subdomain or plain-http page can set them; an https service on another port
// of the same host still can, and would overwrite ours: run nothing untrusted on the host's other https
// ports), and a request carrying one of our names twice is refused (security.ts) rather than served as
// whichever copy comes first.
import { parseCookie, stringifySetCookie } from "cookie";
import type { Response } from "express";

export const csrfHeader = "x-csrf-token";

export interface CookieNames {
  session: string;
  csrf: string;
}

/** The names of the app's cookies: `__Host-` prefixed when they are Secure (PUBLIC_URL is https). */
export function cookieNames(secure: boolean): CookieNames {
  return { session: appCookieName("formsvc_session", secure), csrf: appCookieName("formsvc_csrf", secure) };
}

/** The name of an app cookie: `__Host-` prefixed when it is Secure. */
export function appCookieName(name: string, secure: boolean): string {
  return secure ? `__Host-${name}` : name;
}

/** The cookies of a `Cookie` header by name (the first of repeated names); values URI-decoded when they can be. */
export function parseCookies(header: string | undefined): Record<string, string | undefined> {
  return header ? parseCookie(header) : {};
}

/**
 * Which of `names` the `Cookie` header carries more than once. `parseCookie` keeps one value per name,
 * so the header's pairs are counted here (names trimmed, as the parser does).
 */
export function repeatedCookies(header: string | undefined, names: string[]): string[] {
  if (!header) return [];
  const counts = new Map<string, number>();
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (names.includes(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return names.filter((name) => (counts.get(name) ?? 0) > 1);
}

interface CookieOptions {
  httpOnly: boolean;
  secure: boolean;
  /** Absent: a browser-session cookie. */
  expires?: Date;
}

/** One Set-Cookie value: SameSite=Lax, Path=/, HttpOnly and Secure as asked. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  return stringifySetCookie({
    name,
    value,
    path: "/",
    sameSite: "lax",
    httpOnly: options.httpOnly,
    secure: options.secure,
    expires: options.expires,
  });
}

/** A Set-Cookie value that deletes the cookie `name` stored on `path` (Max-Age=0, and an Expires in the past). */
export function expiredCookie(name: string, options: { httpOnly: boolean; secure: boolean; path?: string }): string {
  return stringifySetCookie({
    name,
    value: "",
    maxAge: 0,
    expires: new Date(0),
    path: options.path ?? "/",
    sameSite: "lax",
    httpOnly: options.httpOnly,
    secure: options.secure,
  });
}

/**
 * The paths a cookie seen on a request to `path` may be stored on: `/`, the app's `/app` and `/app/api`,
 * and every leading part of the request's own path, with and without a trailing slash (a browser sends
 * a cookie of Path=/app/ or Path=/app/api/forms only to paths under it, and deletes it only on that path).
 */
export function cookiePathsFor(path: string): string[] {
  const paths = new Set(["/", "/app", "/app/", "/app/api", "/app/api/"]);
  const segments = path.split("?")[0].split("/").filter(Boolean).slice(0, 8);
  let current = "";
  for (const segment of segments) {
    current += `/${segment}`;
    paths.add(current);
    paths.add(`${current}/`);
  }
  return [...paths].filter((p) => /^[\u0021-\u003A\u003C-\u007E]+$/.test(p));
}

/** Adds a Set-Cookie header, keeping the ones already set on the response. */
export function appendCookie(res: Response, cookie: string): void {
  const current = res.getHeader("Set-Cookie");
  const list = current === undefined ? [] : Array.isArray(current) ? current.map(String) : [String(current)];
  res.setHeader("Set-Cookie", [...list, cookie]);
}
