// The Settings tab's Languages card: the language of the form's own texts (and of its hosted page), and how
// complete each translation (settings.languages, set over the API) is, naming what each misses: forms refuses
// to publish until each is whole.
import { ownerTexts, missingTranslations } from "@formsvc/form-document/translations";
import type { FormDocument, FormSettings } from "../types.ts";
import { t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

/** The shape a BCP 47 tag takes (form-document's languageTagPattern, whose module brings zod, which the app leaves out). */
const languageTagPattern = "[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*";

export function LanguagesCard({ id, document, settings, onLanguage }: { id: string; document: FormDocument; settings: FormSettings; onLanguage(language: string): void }) {
  const total = ownerTexts(document, settings).length;
  const missing = new Map(missingTranslations(document, settings).map((m) => [m.language, m.missing]));
  return (
    <fieldset className="card">
      <legend>{t("languages.title")}</legend>
      <div className="field">
        <label htmlFor={`${id}-language`}>{t("languages.formLanguage")}</label>
        <input
          id={`${id}-language`}
          value={settings.language}
          required
          maxLength={35}
          pattern={languageTagPattern}
          aria-describedby={`${id}-language-hint`}
          onChange={(e) => onLanguage(e.target.value)}
        />
        <p className="hint" id={`${id}-language-hint`}>
          {t("languages.hint")}
        </p>
      </div>
      {settings.languages.length > 0 && (
        <ul className="translations" aria-label={t("languages.translations")}>
          {settings.languages.map(({ language }) => {
            const gaps = missing.get(language) ?? [];
            return (
              <li key={language}>
                {tRich("languages.progress", { language: <strong>{language}</strong>, done: total - gaps.length, total })}
                {gaps.length > 0 && t("languages.missing", { missing: gaps.map((g) => `${g.path} (“${g.text}”)`).join(", ") })}
              </li>
            );
          })}
        </ul>
      )}
    </fieldset>
  );
}
