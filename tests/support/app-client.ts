import assert from "node:assert/strict";
// The app's API (/app/api) as the browser calls it: cookies kept between calls, the CSRF token sent
// back on every write.

/** A browser's cookie jar, reduced to what the app sets: name=value of every Set-Cookie seen. */
export class Cookies {
  private jar = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
      if (/Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }
  get(name: string) {
    return this.jar.get(name);
  }
  header() {
    return [...this.jar].map(([n, v]) => `${n}=${v}`).join("; ");
  }
}

/**
 * One browser on the app: `call(method, path, body)` answers `{status, body}`; start with GET /session.
 * `address`: sent as X-Forwarded-For, so a system started with TRUST_PROXY counts this browser's attempts
 * (sign-up, mailed links: 10 a minute per address) apart from other browsers'.
 */
export function appClient(baseUrl: string, options: { address?: string } = {}) {
  const cookies = new Cookies();
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${baseUrl}/app/api${path}`, {
      method,
      headers: {
        ...(options.address ? { "x-forwarded-for": options.address } : {}),
        cookie: cookies.header(),
        ...(method === "GET" ? {} : { "x-csrf-token": cookies.get("formsvc_csrf") ?? "" }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    cookies.take(res);
    return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
  };
  return { call, cookies };
}

/** Someone who signed up in the app (as `label`, at a fresh address): their client, cookies and own workspace. */
export async function signedUpPerson(baseUrl: string, label: string) {
  const { call, cookies } = appClient(baseUrl);
  await call("GET", "/session");
  const signedUp = await call("POST", "/auth/signup", { email: `${label}.${Date.now()}@example.com`, name: label, password: "correct horse battery" });
  assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
  const workspace = (await call("GET", "/workspaces")).body.items[0];
  return { call, cookies, workspace };
}
