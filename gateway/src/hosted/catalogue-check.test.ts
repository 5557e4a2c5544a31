import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { catalogueProblems } from "./catalogue-check.ts";
import { readCatalogues, type Catalogue } from "./page-messages.ts";

describe("catalogue check", () => {
  it("finds no problem in the shipped catalogues", () => {
    const catalogues = readCatalogues();
    assert.ok(catalogues.size >= 13, `${catalogues.size} catalogues`);
    assert.deepEqual(catalogueProblems(catalogues), []);
  });

  const english = { next: "Next", pageOf: "Page {page} of {pages}", redirectNote: "In {seconds, plural, one {# second} other {# seconds}}." };

  it("names a key a catalogue misses, and one English does not have", () => {
    const problems = catalogueProblems(
      new Map<string, Catalogue>([
        ["en", english],
        ["de", { next: "Weiter", redirectNote: "In {seconds, plural, one {# Sekunde} other {# Sekunden}}.", nxet: "Weiter" }],
      ]),
    );
    assert.deepEqual(problems, ['de: missing "pageOf"', 'de: "nxet" is not a message of en']);
  });

  it("names a message that does not parse, names other arguments or uses a plural category its language lacks", () => {
    const problems = catalogueProblems(
      new Map<string, Catalogue>([
        ["en", english],
        ["ja", { next: "次へ", pageOf: "{page} / {total} ページ", redirectNote: "{seconds, plural, one {# 秒} other {# 秒}}" }],
        ["fr", { next: "Suivant {", pageOf: "Page {page} sur {pages}", redirectNote: "Dans {seconds, plural, one {# seconde} other {# secondes}}." }],
      ]),
    );
    assert.equal(problems.length, 3, problems.join("\n"));
    assert.match(problems[0], /^ja: "pageOf" names arguments \{page, total\}, en names \{page, pages\}$/);
    assert.match(problems[1], /^ja: "redirectNote" has plural category "one", which ja does not use$/);
    assert.match(problems[2], /^fr: "next" is no ICU message/);
  });

  it("refuses a plural in a message the page's script fills in, and a file named by no language tag", () => {
    const problems = catalogueProblems(
      new Map<string, Catalogue>([
        ["en", { ...english, pageOf: "Page {page, plural, other {#}} of {pages}" }],
        ["not a tag", english],
      ]),
    );
    assert.deepEqual(problems, [
      `en: "pageOf" is shown by the page's script, which fills in plain {arguments} only`,
      "not a tag: the file name is no BCP 47 language tag",
    ]);
  });
});
