// The gateway as an OpenID Connect client (OIDC_*): the authorization-code flow with PKCE (S256), state and nonce,
// through `openid-client`, which a gateway loads only when a provider is configured. A flow's secrets travel in a
// cookie sealed under SECRET_KEY (AES-256-GCM), so any replica finishes what another started; oidc.ts holds the
// routes.
import type * as OpenIdClient from "openid-client";
import { isLoopbackHttp, type OidcSettings } from "@formsvc/platform/config.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { sealer } from "@formsvc/platform/sealing.ts";
import { HttpError } from "../http-errors.ts";

/** How long a person has at the provider between leaving and coming back. */
export const oidcTransactionLifetimeMs = 10 * 60 * 1000;
/** The redirect URI, under PUBLIC_URL's origin: what the provider's client registers. */
export const oidcCallbackPath = "/app/api/auth/oidc/callback";

/** What a started flow must find again at its callback. */
export interface OidcTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
  expiresAt: number;
}

/** The person as the provider vouched for them, for identity's SignInWithOidc. */
export interface OidcClaims {
  issuer: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  name: string;
}

/** A configured provider: starts flows and finishes them. */
export interface OidcProvider {
  settings: OidcSettings;
  /** Where the flow's failures at the provider's end are logged. */
  logger: Logger;
  /** The provider's URL to send the browser to, and the transaction to keep until it comes back. */
  start(): Promise<{ url: URL; transaction: OidcTransaction }>;
  /**
   * Checks the callback at `currentUrl` against `transaction` (state, issuer, the ID token and its nonce), redeems
   * its code with the verifier, and reads who signed in. Refusals are HttpErrors: 400 for the flow's, 502 when the
   * provider cannot be reached.
   */
  finish(currentUrl: URL, transaction: OidcTransaction): Promise<OidcClaims>;
  /** The transaction as its cookie's value, and back (sealTransaction, openTransaction under SECRET_KEY). */
  seal(transaction: OidcTransaction): string;
  open(sealed: string): OidcTransaction | undefined;
}

export function oidcProvider(settings: OidcSettings, publicUrl: string, secretKey: string, logger: Logger): OidcProvider {
  const redirectUri = new URL(oidcCallbackPath, publicUrl).href;
  const { name } = settings;
  // Discovered at the first sign-in (the provider need not be up when the gateway starts), again after a failure.
  let discovered: Promise<{ client: typeof OpenIdClient; config: OpenIdClient.Configuration }> | undefined;
  const configuration = () => {
    if (!discovered) {
      discovered = (async () => {
        const client = await import("openid-client");
        const issuer = new URL(settings.issuer);
        const config = await client.discovery(issuer, settings.clientId, settings.clientSecret, settings.clientSecret ? undefined : client.None(), {
          // Plain http only for a provider on this machine (the configuration refuses any other).
          execute: isLoopbackHttp(issuer) ? [client.allowInsecureRequests] : [],
        });
        return { client, config };
      })();
      discovered.catch((err: unknown) => {
        discovered = undefined;
        logger.error({ err }, "the OpenID Connect provider's discovery failed");
      });
    }
    return discovered;
  };

  /** A failed finish as the flow's answer: the provider's or openid-client's refusal (400), or no answer (502). */
  function refusal(client: typeof OpenIdClient, err: unknown): HttpError {
    if (err instanceof client.AuthorizationResponseError) return new HttpError(400, `${name} did not sign you in: ${err.error_description || err.error}`);
    if (err instanceof client.ResponseBodyError) return new HttpError(400, `${name} refused this sign-in (${err.error}); sign in again`);
    // openid-client's own checks: state, issuer, the ID token's signature, audience, nonce and times.
    if (err instanceof client.ClientError) {
      const reason = err.cause instanceof Error ? err.cause.message : err.message;
      return new HttpError(400, `the answer from ${name} does not match this sign-in (${reason}); sign in again`);
    }
    logger.error({ err }, "the OpenID Connect provider could not finish a sign-in");
    return new HttpError(502, `${name} cannot be reached to finish signing you in; try again shortly`);
  }

  return {
    settings,
    logger,
    seal: (transaction) => sealTransaction(transaction, secretKey),
    open: (sealed) => openTransaction(sealed, secretKey),

    async start() {
      const { client, config } = await configuration().catch(() => {
        throw new HttpError(502, `${name} cannot be reached to sign you in; try again shortly`);
      });
      const transaction = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        codeVerifier: client.randomPKCECodeVerifier(),
        expiresAt: Date.now() + oidcTransactionLifetimeMs,
      };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: "openid email profile",
        code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
        code_challenge_method: "S256",
        state: transaction.state,
        nonce: transaction.nonce,
      });
      return { url, transaction };
    },

    async finish(currentUrl, transaction) {
      const { client, config } = await configuration().catch(() => {
        throw new HttpError(502, `${name} cannot be reached to finish signing you in; try again shortly`);
      });
      try {
        const tokens = await client.authorizationCodeGrant(config, currentUrl, {
          pkceCodeVerifier: transaction.codeVerifier,
          expectedState: transaction.state,
          expectedNonce: transaction.nonce,
          idTokenExpected: true,
        });
        const idToken = tokens.claims()!;
        // Many providers put the email in the ID token; the others (oidc-provider's default) answer it at UserInfo.
        const source = typeof idToken.email === "string" ? idToken : await client.fetchUserInfo(config, tokens.access_token, idToken.sub);
        return {
          issuer: idToken.iss,
          subject: idToken.sub,
          email: typeof source.email === "string" ? source.email : "",
          // A few providers send the claim as a string.
          emailVerified: source.email_verified === true || source.email_verified === "true",
          name: typeof source.name === "string" ? source.name : "",
        };
      } catch (err) {
        throw refusal(client, err);
      }
    },
  };
}

/** The cookie holds one kind of thing, so it is bound to nothing more than its purpose. */
const transactionBound = "oidc-transaction";

/** The transaction encrypted and authenticated under SECRET_KEY: nobody reads or changes it unseen. */
export function sealTransaction(transaction: OidcTransaction, secretKey: string): string {
  return sealer(secretKey, "formsvc oidc transactions").seal(JSON.stringify(transaction), transactionBound).toString("base64url");
}

/** The transaction `sealed` holds, while it lasts; undefined when it was changed, sealed under another key, or expired. */
export function openTransaction(sealed: string, secretKey: string, now = Date.now()): OidcTransaction | undefined {
  try {
    const opened = sealer(secretKey, "formsvc oidc transactions").open(Buffer.from(sealed, "base64url"), transactionBound);
    const transaction = JSON.parse(opened.toString("utf8")) as OidcTransaction;
    return transaction.expiresAt > now ? transaction : undefined;
  } catch {
    return undefined;
  }
}
