import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { appCatalogueProblems, literalProblems, readAppCatalogues, visibleLiterals } from "./check.ts";
import { appLanguages } from "./messages.ts";

describe("the app's texts", () => {
  it("ships en and de, complete and sound, each file of messages/ one the app imports", () => {
    const catalogues = readAppCatalogues();
    assert.ok(catalogues.has("en") && catalogues.has("de"), [...catalogues.keys()].join(", "));
    assert.deepEqual(appCatalogueProblems(catalogues), []);
    assert.deepEqual([...appLanguages].sort(), [...catalogues.keys()].sort(), "each catalogue is imported in messages.ts");
  });

  it("names a key de misses, one en does not have, and other arguments", () => {
    const problems = appCatalogueProblems(
      new Map<string, Record<string, string>>([
        ["en", { "forms.new": "New form", "forms.count": "{count, plural, one {# form} other {# forms}}", "ui.cancel": "Cancel" }],
        ["de", { "forms.new": "Neues Formular", "forms.count": "{n} Formulare", "ui.cancle": "Abbrechen" }],
      ]),
    );
    assert.deepEqual(problems, ['de: missing "ui.cancel"', 'de: "forms.count" names arguments {n}, en names {count}', 'de: "ui.cancle" is not a message of en']);
  });

  it("finds the texts a component shows as written: JSX text, shown attributes and properties, notices", () => {
    const source = `
      export function Page({ n }: { n: number }) {
        notify(\`Saved \${n} forms.\`);
        const item = { to: "/forms", label: "Forms" };
        return (
          <div className="page" title="A title">
            <h1>Heading</h1>
            {n > 1 ? "many" : "one"}
            <input placeholder={t("x.y")} aria-label="Name" />
            <code>utm_source</code> — {t("ok")} {"×"} &lt;
            <button onClick={() => setError("Try again.")}>{t("x")}</button>
            <p>{t("a.b", { n })}</p>
          </div>
        );
      }`;
    assert.deepEqual(
      visibleLiterals(source).map(({ line, text }) => `${line}: ${text}`),
      ["3: Saved   forms.", "4: Forms", "6: A title", "7: Heading", "8: many", "8: one", "9: Name", "11: Try again."],
    );
  });

  it("finds no text of its own in any .tsx file of the app", () => {
    assert.deepEqual(literalProblems(), []);
  });
});
