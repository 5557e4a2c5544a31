import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countryAnswer, normalizeCountry } from "./country.ts";

describe("respondent country", () => {
  it("keeps two-letter codes in capitals; anything else is no country", () => {
    assert.equal(normalizeCountry("gb"), "GB");
    assert.equal(normalizeCountry(" DE "), "DE");
    for (const raw of [undefined, "", "XX", "T1", "GBR", "1"]) assert.equal(normalizeCountry(raw), null, String(raw));
  });

  it("is stored as the RESPONDENT_COUNTRY answer", () => {
    assert.deepEqual(countryAnswer("FR"), { questionId: "meta:country", type: "RESPONDENT_COUNTRY", label: "Respondent country", value: "FR" });
  });
});
