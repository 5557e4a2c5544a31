import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import express from "express";
import { countryOf, defaultLookupCountry } from "./country.ts";

/** The country a real Express app sees for a request from this (loopback) client, with `trustProxy` set as TRUST_PROXY would. */
async function countryThrough(trustProxy: boolean | number | string, headers: Record<string, string>): Promise<string> {
  const app = express();
  app.set("trust proxy", trustProxy);
  const lookup = (ip: string) => ({ "127.0.0.1": "NL", "::ffff:127.0.0.1": "NL", "::1": "NL", "81.2.69.160": "GB" })[ip];
  app.get("/", (req, res) => {
    res.json({ country: countryOf(req, "cf-ipcountry", lookup) });
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers });
    return ((await res.json()) as { country: string }).country;
  } finally {
    server.close();
  }
}

describe("respondent country", () => {
  it("ignores COUNTRY_HEADER (and X-Forwarded-For) without TRUST_PROXY: GeoIP of the connecting address", async () => {
    assert.equal(await countryThrough(false, { "cf-ipcountry": "DE" }), "NL");
    assert.equal(await countryThrough(false, { "cf-ipcountry": "DE", "x-forwarded-for": "81.2.69.160" }), "NL");
  });

  it("ignores it from a peer TRUST_PROXY does not name", async () => {
    assert.equal(await countryThrough("10.0.0.0/8", { "cf-ipcountry": "DE" }), "NL");
  });

  it("believes it from a trusted proxy (true, a hop count, or the proxy's address)", async () => {
    assert.equal(await countryThrough(true, { "cf-ipcountry": "de" }), "DE");
    assert.equal(await countryThrough(1, { "cf-ipcountry": "DE" }), "DE");
    assert.equal(await countryThrough("loopback", { "cf-ipcountry": " fr " }), "FR");
  });

  it("falls back to GeoIP of the forwarded client when the header says nothing usable", async () => {
    for (const sent of ["XX", "T1", "Germany", ""]) {
      assert.equal(await countryThrough("loopback", { "cf-ipcountry": sent, "x-forwarded-for": "81.2.69.160" }), "GB", sent);
    }
    assert.equal(await countryThrough("loopback", { "x-forwarded-for": "192.0.2.1" }), "", "no country known");
  });

  it("looks addresses up offline, IPv4-mapped ones too", () => {
    assert.equal(defaultLookupCountry("8.8.8.8"), "US");
    assert.equal(defaultLookupCountry("::ffff:8.8.8.8"), "US");
    assert.equal(defaultLookupCountry("127.0.0.1"), undefined);
  });
});
