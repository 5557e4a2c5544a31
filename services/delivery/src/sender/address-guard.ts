// Keeps webhook requests away from the machine's own network: a DNS `lookup` for node:http(s) that
// refuses, at connect time, every address that is not a public unicast one. Checking at connect time
// (not when the webhook is saved) also catches a hostname that resolves, or later re-resolves, to an
// inside address (DNS rebinding). WEBHOOK_ALLOW_PRIVATE_URLS=true turns the guard off (local receivers);
// WEBHOOK_ALLOWED_CIDRS lets it pass the ranges the operator lists, checked the same way.
import dns from "node:dns";
import net, { type LookupFunction } from "node:net";
import { blockedKind, type AllowedRanges } from "@formsvc/platform/blocked-addresses.ts";

/**
 * A connection the guard refused; not retried (see send-result.ts). Its message is what the integrator
 * reads as the delivery's lastError: it names neither the address a name resolved to nor the kind of
 * range, so webhooks cannot be used to map the inside network or its DNS. The fields are for tests.
 */
export class AddressBlockedError extends Error {
  readonly code = "EADDRBLOCKED";
  readonly host: string;
  readonly address: string;
  readonly kind: string;
  constructor(host: string, address: string, kind: string) {
    super("refused: not a public address");
    this.name = "AddressBlockedError";
    this.host = host;
    this.address = address;
    this.kind = kind;
  }
}

/**
 * Throws AddressBlockedError when `host` is an IP literal of a blocked range not `allowed`. Hostnames pass
 * (the lookup checks them).
 */
export function assertPublicLiteral(host: string, allowed: AllowedRanges = []): void {
  const bare = host.replace(/^\[|\]$/g, "");
  if (net.isIP(bare) === 0) return;
  const kind = blockedKind(bare, allowed);
  if (kind) throw new AddressBlockedError(bare, bare, kind);
}

type Resolve = (hostname: string, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

const systemResolve: Resolve = (hostname, callback) => dns.lookup(hostname, { all: true, verbatim: true }, callback);

/**
 * A `lookup` for http.request / net.connect that resolves like dns.lookup but fails with
 * AddressBlockedError when any address of the name is blocked and not `allowed` (so no fallback to a
 * blocked one). `resolve` is replaceable for tests.
 */
export function guardedLookup(resolve: Resolve = systemResolve, allowed: AllowedRanges = []): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      for (const { address } of addresses) {
        const kind = blockedKind(address, allowed);
        if (kind) return callback(new AddressBlockedError(hostname, address, kind), "", 0);
      }
      if (wanted.length === 0) {
        const notFound: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        notFound.code = "ENOTFOUND";
        return callback(notFound, "", 0);
      }
      if (options.all) return callback(null, wanted);
      callback(null, wanted[0].address, wanted[0].family);
    });
  };
}
