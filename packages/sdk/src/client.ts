import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./openapi.ts";

/** Paths of the REST API, under `/api/v1`, with a key. */
export type ApiPaths = Omit<paths, HostedPath>;
/** Paths of the public hosted-form endpoints, under `/f`, without a key. */
export type HostedPaths = Pick<paths, HostedPath>;
type HostedPath = Extract<keyof paths, `/f/${string}`>;

export interface FormsClientOptions {
  /** The installation's address (its PUBLIC_URL), e.g. `https://forms.example.com`. */
  baseUrl: string;
  /** An API key, `fk-...`. */
  apiKey: string;
  /** A fetch of your own (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, "");

/**
 * A typed client of `/api/v1`: `client.GET("/forms/{id}", { params: { path: { id } } })` answers
 * `{ data, error, response }` with `data` typed by the operation's success schema and `error` by `{error}`.
 */
export function createFormsClient(options: FormsClientOptions): Client<ApiPaths> {
  return createClient<ApiPaths>({
    baseUrl: `${withoutTrailingSlash(options.baseUrl)}/api/v1`,
    headers: { authorization: `Bearer ${options.apiKey}` },
    fetch: options.fetch,
  });
}

/** A typed client of the public hosted-form endpoints (`/f/{formId}/...`), for a front end of your own. */
export function createHostedFormsClient(options: Omit<FormsClientOptions, "apiKey">): Client<HostedPaths> {
  return createClient<HostedPaths>({ baseUrl: withoutTrailingSlash(options.baseUrl), fetch: options.fetch });
}
