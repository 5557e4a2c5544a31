import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { describe, it } from "node:test";
import { AddressBlockedError, assertPublicLiteral, blockedKind, embeddedIpv4, guardedLookup } from "./address-guard.ts";

describe("address guard ranges", () => {
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
    ["8.8.8.8", undefined],
    ["93.184.216.34", undefined],
    ["1.1.1.1", undefined],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["febf::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["2606:4700:4700::1111", undefined],
    ["2001:4860:4860::8888", undefined],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:8.8.8.8", undefined],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["64:ff9b::8.8.8.8", undefined],
  ];
  for (const [address, kind] of cases) {
    it(`${address} is ${kind ?? "public"}`, () => assert.equal(blockedKind(address), kind));
  }

  it("reads the IPv4 address inside mapped, compatible and NAT64 addresses only", () => {
    assert.equal(embeddedIpv4("::ffff:192.168.0.1"), "192.168.0.1");
    assert.equal(embeddedIpv4("::ffff:c0a8:1"), "192.168.0.1");
    assert.equal(embeddedIpv4("64:ff9b::c0a8:1"), "192.168.0.1");
    assert.equal(embeddedIpv4("::1"), undefined);
    assert.equal(embeddedIpv4("::"), undefined);
    assert.equal(embeddedIpv4("2001:db8::c0a8:1"), undefined);
  });

  it("refuses private IP literals (also bracketed IPv6) with a clear message, lets hostnames and public literals pass", () => {
    assert.throws(() => assertPublicLiteral("127.0.0.1"), (err: unknown) => {
      assert.ok(err instanceof AddressBlockedError);
      assert.equal(err.message, "127.0.0.1 is a loopback address; webhooks may only reach public addresses");
      return true;
    });
    assert.throws(() => assertPublicLiteral("[::1]"), AddressBlockedError);
    assert.throws(() => assertPublicLiteral("[::ffff:10.0.0.1]"), AddressBlockedError);
    assert.doesNotThrow(() => assertPublicLiteral("example.com"));
    assert.doesNotThrow(() => assertPublicLiteral("8.8.8.8"));
  });
});

describe("guarded lookup", () => {
  const fakeDns = (table: Record<string, LookupAddress[]>) =>
    guardedLookup((hostname, callback) => {
      const found = table[hostname];
      if (!found) {
        const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        err.code = "ENOTFOUND";
        return callback(err, []);
      }
      callback(null, found);
    });
  const lookup = fakeDns({
    "public.test": [{ address: "93.184.216.34", family: 4 }, { address: "2606:2800:220:1::1", family: 6 }],
    "sneaky.test": [{ address: "93.184.216.34", family: 4 }, { address: "10.0.0.5", family: 4 }],
    "metadata.test": [{ address: "169.254.169.254", family: 4 }],
    "mapped.test": [{ address: "::ffff:127.0.0.1", family: 6 }],
  });
  const ask = (host: string, options: object) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      lookup(host, options, (err, address, family) => resolve({ err, address, family })),
    );

  it("answers a public name as dns.lookup would (one address, or all, by family)", async () => {
    assert.deepEqual(await ask("public.test", {}), { err: null, address: "93.184.216.34", family: 4 });
    assert.deepEqual(await ask("public.test", { family: 6 }), { err: null, address: "2606:2800:220:1::1", family: 6 });
    const all = await ask("public.test", { all: true });
    assert.equal(all.err, null);
    assert.deepEqual(all.address, [
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:220:1::1", family: 6 },
    ]);
  });

  it("refuses a name when any of its addresses is blocked", async () => {
    for (const [host, address, kind] of [
      ["sneaky.test", "10.0.0.5", "private"],
      ["metadata.test", "169.254.169.254", "link-local"],
      ["mapped.test", "::ffff:127.0.0.1", "loopback"],
    ]) {
      const { err } = await ask(host, { all: true });
      assert.ok(err instanceof AddressBlockedError, host);
      assert.equal(err.message, `${host} resolves to ${address}, a ${kind} address; webhooks may only reach public addresses`);
    }
  });

  it("passes resolution errors on", async () => {
    const { err } = await ask("nowhere.test", {});
    assert.equal(err?.code, "ENOTFOUND");
  });

  it("checks real resolution too: localhost is loopback", async () => {
    const real = guardedLookup();
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => real("localhost", { all: true }, (e) => resolve(e)));
    assert.ok(err instanceof AddressBlockedError);
    assert.match(err.message, /^localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
  });
});
