// Settings → Account: who the person is, and the language the app speaks to them. The choice is kept with
// their account (PUT /app/api/session/locale), so it follows them to every browser; without one the app
// speaks the browser's language.
import { useId, useState } from "react";
import { InlineMessage } from "../components/ui.tsx";
import { appLanguages, browserLanguage, catalogueLanguageOf, t } from "../i18n/messages.ts";
import { formatDateTime } from "../lib/format.ts";
import { useSession } from "../session.tsx";

/** A language's name in itself (CLDR, through Intl): "Deutsch", "English". */
export function languageName(language: string): string {
  const name = new Intl.DisplayNames([language], { type: "language" }).of(language) ?? language;
  return name.charAt(0).toLocaleUpperCase(language) + name.slice(1);
}

const browserChoice = "";

export function AccountPage() {
  const { user, setLocale } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const languageId = useId();
  if (!user) return null;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{t("account.title")}</h1>
          <p className="muted">{t("account.intro")}</p>
        </div>
      </div>
      <section className="card stack" aria-labelledby="account-you">
        <h2 id="account-you">{t("account.you")}</h2>
        <dl className="facts">
          <dt>{t("account.name")}</dt>
          <dd>{user.name}</dd>
          <dt>{t("account.email")}</dt>
          <dd>{user.email}</dd>
          <dt>{t("account.since")}</dt>
          <dd data-testid="account-since">{formatDateTime(user.createdAt)}</dd>
        </dl>
      </section>
      <section className="card stack" aria-labelledby="account-language">
        <h2 id="account-language">{t("account.languageTitle")}</h2>
        <div className="field">
          <label htmlFor={languageId}>{t("account.language")}</label>
          <select
            id={languageId}
            value={(user.locale && catalogueLanguageOf(user.locale)) || browserChoice}
            disabled={busy}
            aria-describedby={`${languageId}-hint`}
            onChange={async (event) => {
              setBusy(true);
              setError(undefined);
              try {
                await setLocale(event.target.value === browserChoice ? null : event.target.value);
              } catch (err) {
                setError((err as Error).message);
              } finally {
                setBusy(false);
              }
            }}
          >
            <option value={browserChoice}>{t("account.browserLanguage", { language: languageName(browserLanguage(navigator.languages)) })}</option>
            {appLanguages.map((language) => (
              <option key={language} value={language} lang={language}>
                {languageName(language)}
              </option>
            ))}
          </select>
          <p className="hint" id={`${languageId}-hint`}>
            {t("account.languageHint")}
          </p>
        </div>
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
      </section>
    </div>
  );
}
