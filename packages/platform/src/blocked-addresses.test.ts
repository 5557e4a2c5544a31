// Literals only: nothing here connects anywhere.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { blockedKind, embeddedIpv4, parseAllowedCidrs } from "./blocked-addresses.ts";

describe("blocked address ranges", () => {
  const cases: [string, string | undefined][] = [
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.1", undefined],
    ["172.15.255.255", undefined],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["100.128.0.1", undefined],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.7", "reserved"],
    ["192.88.99.1", "reserved"],
    ["192.88.98.255", undefined],
    ["192.88.100.0", undefined],
    ["198.19.255.255", "reserved"],
    ["8.8.8.8", undefined],
    ["93.184.216.34", undefined],
    ["1.1.1.1", undefined],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["fec0::1", "site-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["100::1", "reserved"],
    ["2001:db8::1", "reserved"],
    ["2001::1", "reserved"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"],
    ["2001:1ff:ffff::1", "reserved"],
    ["2001:200::1", undefined],
    ["3fff::1", "reserved"],
    ["3fff:fff:ffff::1", "reserved"],
    ["3fff:1000::1", undefined],
    ["5f00::1", "reserved"],
    ["5f00:ffff::1", "reserved"],
    ["5f01::1", undefined],
    ["64:ff9b:1::1", "reserved"],
    ["2606:4700:4700::1111", undefined],
    ["2001:4860:4860::8888", undefined],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:192.88.99.1", "reserved"],
    ["::ffff:8.8.8.8", undefined],
    ["::127.0.0.1", "loopback"],
    ["::10.0.0.1", "private"],
    ["::8.8.8.8", undefined],
    ["::ffff:0:127.0.0.1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["64:ff9b::8.8.8.8", undefined],
    ["2002:c0a8:101::1", "private"],
    ["2002:808:808::1", undefined],
    ["localhost", "invalid"],
    ["0x7f.1", "invalid"],
    ["", "invalid"],
  ];
  for (const [address, kind] of cases) {
    it(`${address || "(empty)"} is ${kind ?? "public"}`, () => assert.equal(blockedKind(address), kind));
  }

  it("reads the IPv4 address inside mapped, translated, compatible, NAT64 and 6to4 addresses only", () => {
    assert.equal(embeddedIpv4("::ffff:192.168.0.1"), "192.168.0.1");
    assert.equal(embeddedIpv4("::ffff:c0a8:1"), "192.168.0.1");
    assert.equal(embeddedIpv4("::ffff:0:c0a8:1"), "192.168.0.1");
    assert.equal(embeddedIpv4("::c0a8:1"), "192.168.0.1");
    assert.equal(embeddedIpv4("64:ff9b::c0a8:1"), "192.168.0.1");
    assert.equal(embeddedIpv4("2002:c0a8:1::5"), "192.168.0.1");
    assert.equal(embeddedIpv4("::1"), undefined);
    assert.equal(embeddedIpv4("::"), undefined);
    assert.equal(embeddedIpv4("2001:db8::c0a8:1"), undefined);
    assert.equal(embeddedIpv4("192.168.0.1"), undefined);
  });
});

describe("WEBHOOK_ALLOWED_CIDRS", () => {
  it("lets the listed ranges through, whatever form the address takes, and nothing else", () => {
    const allowed = parseAllowedCidrs(" 127.0.0.0/24 ,::1/128,");
    for (const address of ["127.0.0.1", "127.0.0.254", "::ffff:127.0.0.9", "::1"]) assert.equal(blockedKind(address, allowed), undefined, address);
    for (const address of ["127.0.1.1", "127.255.255.254"]) assert.equal(blockedKind(address, allowed), "loopback", address);
    assert.equal(blockedKind("169.254.169.254", allowed), "link-local");
    assert.deepEqual(parseAllowedCidrs(""), []);
  });

  it("refuses an entry that is not a CIDR range, naming it", () => {
    assert.throws(() => parseAllowedCidrs("127.0.0.0/24, 127.0.0.1"), { message: '"127.0.0.1" is not a CIDR range such as 192.168.10.0/24 or fd00:1::/64' });
    assert.throws(() => parseAllowedCidrs("127.0.0.0/33"), /"127.0.0.0\/33" is not a CIDR range/);
  });
});
