// The auto-join domains field's text as the list the server is sent.
import { describe, expect, it } from "vitest";
import { domainsOf } from "./AutoJoinDomains.tsx";

describe("auto-join domains as typed", () => {
  it("splits on commas, spaces and lines, dropping empty parts", () => {
    expect(domainsOf(" example.org, example.net\nexample.com ,, ")).toEqual(["example.org", "example.net", "example.com"]);
    expect(domainsOf("   ")).toEqual([]);
  });
});
