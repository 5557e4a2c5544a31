// Which IP addresses are not public unicast ones. Webhooks refuses such literals when a webhook is saved;
// delivery refuses them again at connect time, after DNS. One list, so the two never disagree.
import net from "node:net";

/** Address ranges a webhook may not reach, each with the name used in the error. */
const blockedRanges: readonly { range: string; family: 4 | 6; kind: string }[] = [
  { range: "0.0.0.0/8", family: 4, kind: "unspecified" },
  { range: "10.0.0.0/8", family: 4, kind: "private" },
  { range: "100.64.0.0/10", family: 4, kind: "carrier-grade NAT" },
  { range: "127.0.0.0/8", family: 4, kind: "loopback" },
  { range: "169.254.0.0/16", family: 4, kind: "link-local" },
  { range: "172.16.0.0/12", family: 4, kind: "private" },
  { range: "192.0.0.0/24", family: 4, kind: "reserved" },
  { range: "192.0.2.0/24", family: 4, kind: "reserved" },
  { range: "192.168.0.0/16", family: 4, kind: "private" },
  { range: "198.18.0.0/15", family: 4, kind: "reserved" },
  { range: "198.51.100.0/24", family: 4, kind: "reserved" },
  { range: "203.0.113.0/24", family: 4, kind: "reserved" },
  { range: "224.0.0.0/4", family: 4, kind: "multicast" },
  { range: "240.0.0.0/4", family: 4, kind: "reserved" },
  { range: "255.255.255.255/32", family: 4, kind: "broadcast" },
  { range: "::/128", family: 6, kind: "unspecified" },
  { range: "::1/128", family: 6, kind: "loopback" },
  { range: "100::/64", family: 6, kind: "reserved" },
  { range: "64:ff9b:1::/48", family: 6, kind: "reserved" },
  { range: "2001:db8::/32", family: 6, kind: "reserved" },
  { range: "fc00::/7", family: 6, kind: "unique-local" },
  { range: "fe80::/10", family: 6, kind: "link-local" },
  { range: "fec0::/10", family: 6, kind: "site-local" },
  { range: "ff00::/8", family: 6, kind: "multicast" },
];

const lists = blockedRanges.map(({ range, family, kind }) => {
  const [address, prefix] = range.split("/");
  const list = new net.BlockList();
  list.addSubnet(address, Number(prefix), family === 4 ? "ipv4" : "ipv6");
  return { list, family, kind };
});

/** The 8 16-bit groups of an IPv6 address (which may end in a dotted IPv4 address). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const bytes = dotted[1].split(".").map(Number);
    text = `${text.slice(0, dotted.index)}${((bytes[0] << 8) | bytes[1]).toString(16)}:${((bytes[2] << 8) | bytes[3]).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...new Array<number>(Math.max(fill, 0)).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach IPv4 hosts:
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) or 6to4
 * (2002:AABB:CCDD::/48).
 */
export function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (!g) return undefined;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  const mapped = zeros(5) && g[5] === 0xffff;
  const compatible = zeros(6) && (g[6] !== 0 || g[7] > 1);
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  const [hi, lo] = g[0] === 0x2002 ? [g[1], g[2]] : [g[6], g[7]];
  if (!mapped && !compatible && !nat64 && g[0] !== 0x2002) return undefined;
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
}

/** Why an address may not be reached ("loopback", "private", ...), or undefined when it is public. */
export function blockedKind(address: string): string | undefined {
  const family = net.isIP(address);
  if (family === 0) return "invalid";
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== undefined) return blockedKind(v4);
  }
  for (const entry of lists) {
    if (entry.family === family && entry.list.check(address, family === 4 ? "ipv4" : "ipv6")) return entry.kind;
  }
  return undefined;
}
