import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { appCatalogueProblems, literalProblems, readAppCatalogues, visibleLiterals } from "./check.ts";

/**
 * The .tsx files whose texts are not in the catalogue yet (issue 30 part 5 extracted the main pages first).
 * The list only shrinks: a file here must still have such texts, and every other file must have none.
 */
const notYetExtracted = new Set([
  "pages/Administration.tsx",
  "pages/ApiKeys.tsx",
  "pages/AuditLog.tsx",
  "pages/Auth.tsx",
  "pages/AutoJoinDomains.tsx",
  "pages/Design.tsx",
  "pages/FormSettings.tsx",
  "pages/Insights.tsx",
  "pages/Integrations.tsx",
  "pages/LanguagesCard.tsx",
  "pages/LivePreview.tsx",
  "pages/LogicEditor.tsx",
  "pages/OidcSignIn.tsx",
  "pages/QuestionSettings.tsx",
  "pages/Security.tsx",
  "pages/Share.tsx",
  "pages/SingleUseLinks.tsx",
  "pages/Workspaces.tsx",
]);

describe("the app's texts", () => {
  it("ships en and de, complete and sound", () => {
    const catalogues = readAppCatalogues();
    assert.deepEqual([...catalogues.keys()], ["de", "en"]);
    assert.deepEqual(appCatalogueProblems(catalogues), []);
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
            <code>utm_source</code> — {t("ok")} {"×"}
            <p>{t("a.b", { n })}</p>
          </div>
        );
      }`;
    assert.deepEqual(
      visibleLiterals(source).map(({ line, text }) => `${line}: ${text}`),
      ["3: Saved   forms.", "4: Forms", "6: A title", "7: Heading", "8: many", "8: one", "9: Name"],
    );
  });

  it("finds no text of its own in any extracted .tsx file, and one in each file not yet extracted", () => {
    const problems = literalProblems();
    const files = new Set(problems.map((line) => line.slice(0, line.indexOf(":"))));
    assert.deepEqual(
      problems.filter((line) => !notYetExtracted.has(line.slice(0, line.indexOf(":")))),
      [],
    );
    for (const file of notYetExtracted) assert.ok(files.has(file), `${file} has no text of its own any more: take it off notYetExtracted`);
  });
});
