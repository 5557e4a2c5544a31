// The one way the app talks to the server: JSON over /app/api with the session cookie, and the CSRF
// token (from its cookie) in X-CSRF-Token on every request that changes something.
import type { FieldProblem } from "./types.ts";
import { t } from "./i18n/messages.ts";

export const apiBase = "/app/api";

export class ApiError extends Error {
  readonly status: number;
  readonly fields: FieldProblem[];
  constructor(status: number, message: string, fields: FieldProblem[] = []) {
    super(message);
    this.status = status;
    this.fields = fields;
  }
}

/** The `fields` of an error answer, when it has well-formed ones. */
function fieldProblemsOf(body: unknown): FieldProblem[] {
  const fields = (body as { fields?: unknown } | null | undefined)?.fields;
  if (!Array.isArray(fields)) return [];
  return fields.filter((f): f is FieldProblem => typeof f?.key === "string" && typeof f?.message === "string");
}

let csrfFallback = "";
let onSignedOut: (() => void) | undefined;

/** Called when a request finds the session gone (401), so the app can show the sign-in page. */
export function setSignedOutHandler(handler: (() => void) | undefined): void {
  onSignedOut = handler;
}

export function rememberCsrfToken(token: string | undefined): void {
  if (token) csrfFallback = token;
}

/** A cookie's value from a `document.cookie` string. */
export function cookieValue(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** The CSRF cookie's name: the server gives it the __Host- prefix when the app is served over https. */
export function csrfCookieName(protocol: string): string {
  return protocol === "https:" ? "__Host-formsvc_csrf" : "formsvc_csrf";
}

function csrfToken(): string {
  const fromCookie = typeof document === "undefined" ? undefined : cookieValue(document.cookie, csrfCookieName(location.protocol));
  return fromCookie || csrfFallback;
}

/** Message of an error answer: the server's `{error}` (English: API errors are for developers), or a plain description of the status. */
export function errorMessage(status: number, body: unknown): string {
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === "string" && error) return error;
  if (status === 0) return t("api.unreachable");
  if (status >= 500) return t("api.serverError");
  return t("api.failed", { status });
}

/** One request: the answer's text when it succeeds, else an ApiError with the server's message. */
async function request(method: string, path: string, body: unknown, accept: string, signal?: AbortSignal): Promise<string> {
  const headers: Record<string, string> = { accept };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET") headers["x-csrf-token"] = csrfToken();
  let res: Response;
  try {
    res = await fetch(apiBase + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiError(0, errorMessage(0, null));
  }
  const text = await res.text();
  if (!res.ok) {
    if (res.status === 401 && !path.startsWith("/auth/")) onSignedOut?.();
    const answer = parseJson(text);
    throw new ApiError(res.status, errorMessage(res.status, answer), fieldProblemsOf(answer));
  }
  return text;
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  return parseJson(await request(method, path, body, "application/json")) as T;
}

/** POST a JSON body and take the answer as a page of HTML (the editor's live preview). */
export const postForHtml = (path: string, body: unknown, signal?: AbortSignal) => request("POST", path, body, "text/html", signal);

export const get = <T>(path: string) => api<T>("GET", path);
export const post = <T>(path: string, body?: unknown) => api<T>("POST", path, body ?? {});
export const patch = <T>(path: string, body: unknown) => api<T>("PATCH", path, body);
export const put = <T>(path: string, body: unknown) => api<T>("PUT", path, body);
export const del = <T = void>(path: string) => api<T>("DELETE", path);
