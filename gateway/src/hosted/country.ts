// The respondent's country, kept with a response. COUNTRY_HEADER (cf-ipcountry by default) is believed
// only when the request came through a proxy the gateway trusts (TRUST_PROXY): anyone connecting
// directly could send any country in it. Otherwise the country is an offline GeoIP lookup of the
// client address (which TRUST_PROXY decides the same way, through Express's req.ip).
import { createRequire } from "node:module";
import type { Request } from "express";
import type geoipCountry from "geoip-country";
import { blockedKind } from "@formsvc/platform/blocked-addresses.ts";

export type LookupCountry = (ip: string) => string | undefined;

let geoip: typeof geoipCountry | undefined;

/**
 * The country of a public address from the offline GeoIP tables. They take ~8 MiB, read in on the first
 * public address: a gateway behind a proxy that sends the country, or one that only sees private
 * addresses (which have none), never holds them.
 */
export function defaultLookupCountry(ip: string): string | undefined {
  const address = ip.startsWith("::ffff:") ? ip.slice(7) : ip;
  if (blockedKind(address) !== undefined) return undefined;
  geoip ??= createRequire(import.meta.url)("geoip-country") as typeof geoipCountry;
  return geoip.lookup(address)?.country || undefined;
}

/** Whether the peer that connected is a proxy the app trusts ("trust proxy", set from TRUST_PROXY). */
function fromTrustedProxy(req: Request): boolean {
  const trust = req.app.get("trust proxy fn") as ((address: string, hop: number) => boolean) | undefined;
  const peer = req.socket.remoteAddress;
  return peer !== undefined && trust !== undefined && trust(peer, 0);
}

/** The respondent's country: the configured header (two letters) behind a trusted proxy, else GeoIP of the client address. */
export function countryOf(req: Request, header: string, lookup: LookupCountry): string {
  const sent = fromTrustedProxy(req) ? req.get(header)?.trim() : undefined;
  // Cloudflare sends XX for unknown and T1 for Tor; neither is a country.
  if (sent && /^[A-Za-z]{2}$/.test(sent) && sent.toUpperCase() !== "XX") return sent.toUpperCase();
  if (!req.ip) return "";
  try {
    const found = lookup(req.ip)?.toUpperCase();
    return found && /^[A-Z]{2}$/.test(found) ? found : "";
  } catch {
    return "";
  }
}
