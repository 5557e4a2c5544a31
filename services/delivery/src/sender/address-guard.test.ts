import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { describe, it } from "node:test";
import { AddressBlockedError, assertPublicLiteral, guardedLookup } from "./address-guard.ts";

describe("address guard literals", () => {
  it("refuses private IP literals (also bracketed IPv6) with a clear message, lets hostnames and public literals pass", () => {
    assert.throws(() => assertPublicLiteral("127.0.0.1"), (err: unknown) => {
      assert.ok(err instanceof AddressBlockedError);
      assert.equal(err.message, "refused: not a public address");
      assert.deepEqual([err.address, err.kind], ["127.0.0.1", "loopback"]);
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
      assert.deepEqual([err.host, err.address, err.kind], [host, address, kind]);
      assert.equal(err.message, "refused: not a public address", "no resolved address in what integrators read");
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
    assert.match(err.address, /^(127\.0\.0\.1|::1)$/);
    assert.equal(err.kind, "loopback");
  });
});
