// Which IP addresses are not public unicast ones. Webhooks refuses such literals when a webhook is saved;
// delivery refuses them again at connect time, after DNS. One list, so the two never disagree.
import net from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Address ranges a webhook may not reach, each with the name used in the error; the first match
 * names an address. The special-purpose ranges of IANA's registries that are not globally reachable,
 * which is what ipaddr.js's `range()` lists as well (its as112 and amt anycast services stay allowed:
 * they are public).
 */
const blockedRanges: readonly { range: string; kind: string }[] = [
  { range: "0.0.0.0/8", kind: "unspecified" },
  { range: "10.0.0.0/8", kind: "private" },
  { range: "100.64.0.0/10", kind: "carrier-grade NAT" },
  { range: "127.0.0.0/8", kind: "loopback" },
  { range: "169.254.0.0/16", kind: "link-local" },
  { range: "172.16.0.0/12", kind: "private" },
  { range: "192.0.0.0/24", kind: "reserved" },
  { range: "192.0.2.0/24", kind: "reserved" },
  { range: "192.88.99.0/24", kind: "reserved" }, // 6to4 relay anycast (RFC 7526)
  { range: "192.168.0.0/16", kind: "private" },
  { range: "198.18.0.0/15", kind: "reserved" },
  { range: "198.51.100.0/24", kind: "reserved" },
  { range: "203.0.113.0/24", kind: "reserved" },
  { range: "224.0.0.0/4", kind: "multicast" },
  { range: "240.0.0.0/4", kind: "reserved" },
  { range: "255.255.255.255/32", kind: "broadcast" },
  { range: "::/128", kind: "unspecified" },
  { range: "::1/128", kind: "loopback" },
  { range: "100::/64", kind: "reserved" },
  { range: "64:ff9b:1::/48", kind: "reserved" },
  { range: "2001::/23", kind: "reserved" }, // IETF protocol assignments, Teredo (2001::/32) among them
  { range: "2001:db8::/32", kind: "reserved" },
  { range: "3fff::/20", kind: "reserved" }, // documentation (RFC 9637)
  { range: "5f00::/16", kind: "reserved" }, // SRv6 SIDs (RFC 9602)
  { range: "fc00::/7", kind: "unique-local" },
  { range: "fe80::/10", kind: "link-local" },
  { range: "fec0::/10", kind: "site-local" },
  { range: "ff00::/8", kind: "multicast" },
];

const parsedRanges = blockedRanges.map(({ range, kind }) => ({ cidr: ipaddr.parseCIDR(range), kind }));

/** IPv6 prefixes whose last 32 bits are an IPv4 address that the packet reaches. */
const ipv4Carriers = [
  ipaddr.IPv6.parseCIDR("::ffff:0:0/96"), // IPv4-mapped
  ipaddr.IPv6.parseCIDR("::ffff:0:0:0/96"), // IPv4-translated (SIIT, RFC 6145)
  ipaddr.IPv6.parseCIDR("64:ff9b::/96"), // NAT64 well-known prefix
  ipaddr.IPv6.parseCIDR("::/96"), // IPv4-compatible (deprecated), checked after :: and ::1 below
];

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach IPv4 hosts:
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d),
 * NAT64 (64:ff9b::a.b.c.d) or 6to4 (2002:AABB:CCDD::/48).
 */
export function embeddedIpv4(address: string): string | undefined {
  if (!net.isIPv6(address)) return undefined;
  const v6 = ipaddr.IPv6.parse(address);
  const p = v6.parts;
  // :: and ::1 are IPv6's own unspecified and loopback addresses, not IPv4-compatible ones.
  if (p.slice(0, 7).every((x) => x === 0) && p[7] <= 1) return undefined;
  let hi: number;
  let lo: number;
  if (v6.range() === "6to4") [hi, lo] = [p[1], p[2]];
  else if (ipv4Carriers.some((carrier) => v6.match(carrier))) [hi, lo] = [p[6], p[7]];
  else return undefined;
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
}

/** Ranges an operator lets webhooks reach although they are not public (WEBHOOK_ALLOWED_CIDRS: a LAN n8n). */
export type AllowedRanges = readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];

/**
 * WEBHOOK_ALLOWED_CIDRS: comma-separated CIDR ranges (`192.168.10.0/24, fd00:1::/64`); empty: none. Throws
 * an Error naming the entry that is not one.
 */
export function parseAllowedCidrs(raw: string): AllowedRanges {
  const entries = raw.split(",").map((entry) => entry.trim()).filter(Boolean);
  return entries.map((entry) => {
    try {
      return ipaddr.parseCIDR(entry);
    } catch {
      throw new Error(`"${entry}" is not a CIDR range such as 192.168.10.0/24 or fd00:1::/64`);
    }
  });
}

/**
 * Why an address may not be reached ("loopback", "private", ...), or undefined when it is public or in
 * one of the `allowed` ranges.
 */
export function blockedKind(address: string, allowed: AllowedRanges = []): string | undefined {
  // net.isIP is the gate: ipaddr.js would also read forms like "0x7f.1", which no resolver answers.
  const family = net.isIP(address);
  if (family === 0) return "invalid";
  const v4 = family === 6 ? embeddedIpv4(address) : undefined;
  if (v4 !== undefined) return blockedKind(v4, allowed);
  const parsed = ipaddr.parse(address);
  for (const { cidr, kind } of parsedRanges) {
    if (parsed.kind() === cidr[0].kind() && parsed.match(cidr)) return inRanges(parsed, allowed) ? undefined : kind;
  }
  return undefined;
}

function inRanges(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: AllowedRanges): boolean {
  return ranges.some((range) => address.kind() === range[0].kind() && address.match(range));
}
