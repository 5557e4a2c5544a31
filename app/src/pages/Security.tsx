// Settings → Security: two-factor sign-in. Turning it on shows a QR code (and the secret, to type) for an
// authenticator app, asks one of its codes, then shows the ten recovery codes once. A workspace that
// requires it brings its members here before anything else.
import { useState, type FormEvent } from "react";
import { get, post } from "../api.ts";
import { ErrorState, InlineMessage, Loading, useLoad, useNotify } from "../components/ui.tsx";
import { copyText } from "../lib/clipboard.ts";
import { useSession } from "../session.tsx";
import { t } from "../i18n/messages.ts";

interface TwoFactorStatus {
  enabled: boolean;
  recoveryCodesLeft: number;
  requiredBy: string[];
}

interface Enrolment {
  secret: string;
  uri: string;
  qrCodeSvg: string;
}

/** The ten codes, shown once, with a copy button and a plain-text download. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const notify = useNotify();
  const text = codes.join("\n") + "\n";
  return (
    <section className="card stack" aria-labelledby="recovery-codes-title">
      <h2 id="recovery-codes-title">{t("security.yourCodes")}</h2>
      <p>{t("security.codesIntro")}</p>
      <ul className="recovery-codes" aria-label={t("security.codes")}>
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div className="row">
        <button type="button" onClick={() => copyText(text).then(() => notify(t("security.codesCopied"), "info"))}>
          {t("keys.copy")}
        </button>
        <a className="button" href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`} download="formsvc-recovery-codes.txt">
          {t("security.download")}
        </a>
        <button type="button" className="primary" onClick={onDone}>
          {t("security.saved")}
        </button>
      </div>
    </section>
  );
}

/** A form asking one code of the second factor, for an action that needs it. */
function CodeForm({ id, label, action, onSubmit }: { id: string; label: string; action: string; onSubmit: (code: string) => Promise<void> }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    setBusy(true);
    setError(undefined);
    try {
      await onSubmit(String(new FormData(form).get("code") ?? ""));
      form.reset();
    } catch (err) {
      setError((err as Error).message.replace(/^(body\.)?code: /, ""));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} className="stack">
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input id={id} name="code" autoComplete="one-time-code" maxLength={40} required aria-invalid={error ? true : undefined} />
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
      </div>
      <button type="submit" disabled={busy}>
        {busy ? t("auth.checking") : action}
      </button>
    </form>
  );
}

export function SecurityPage() {
  const { twoFactorRequired, twoFactorChanged } = useSession();
  const status = useLoad(() => get<TwoFactorStatus>("/account/two-factor"), []);
  const [enrolment, setEnrolment] = useState<Enrolment>();
  const [codes, setCodes] = useState<string[]>();
  const [error, setError] = useState<string>();
  const notify = useNotify();

  const begin = async () => {
    setError(undefined);
    try {
      setEnrolment(await post<Enrolment>("/account/two-factor/enrolment"));
    } catch (err) {
      setError((err as Error).message);
    }
  };

  if (status.loading && !status.data) return <Loading what={t("security.loading")} />;
  if (status.error) return <ErrorState message={status.error} onRetry={status.reload} />;
  const { enabled, recoveryCodesLeft, requiredBy } = status.data!;

  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{t("nav.security")}</h1>
          <p className="muted">{t("security.intro")}</p>
        </div>
      </div>
      {twoFactorRequired && (
        <InlineMessage kind="info">
          {t("security.requiredBy", { workspaces: requiredBy.join(", "), count: requiredBy.length })}
        </InlineMessage>
      )}
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      {codes ? (
        <RecoveryCodes
          codes={codes}
          onDone={() => {
            setCodes(undefined);
            status.reload();
          }}
        />
      ) : enabled ? (
        <section className="card stack" aria-labelledby="two-factor-title">
          <h2 id="two-factor-title">{t("security.on")}</h2>
          <p>
            {t("security.codesLeft", { left: recoveryCodesLeft })}
            {recoveryCodesLeft <= 3 && ` ${t("security.makeNew")}`}
          </p>
          <h3>{t("security.newCodes")}</h3>
          <CodeForm
            id="recovery-code"
            label={t("security.codeOfAuthenticator")}
            action={t("security.makeCodes")}
            onSubmit={async (code) => setCodes((await post<{ recoveryCodes: string[] }>("/account/two-factor/recovery-codes", { code })).recoveryCodes)}
          />
          <h3>{t("security.turnOffTitle")}</h3>
          {requiredBy.length > 0 ? (
            <p className="muted">{t("security.staysOn", { workspaces: requiredBy.join(", ") })}</p>
          ) : (
            <CodeForm
              id="disable-code"
              label={t("security.codeOrRecovery")}
              action={t("security.turnOff")}
              onSubmit={async (code) => {
                await post("/account/two-factor/disable", { code });
                twoFactorChanged(false);
                notify(t("security.isOff"), "info");
                status.reload();
              }}
            />
          )}
        </section>
      ) : enrolment ? (
        <section className="card stack" aria-labelledby="enrol-title">
          <h2 id="enrol-title">{t("security.setUp")}</h2>
          <ol className="stack">
            <li>
              {t("security.scan")}
              <div className="qr-code" role="img" aria-label={t("security.qr")} dangerouslySetInnerHTML={{ __html: enrolment.qrCodeSvg }} />
              {t("security.typeKey")} <code data-testid="totp-secret">{enrolment.secret.replace(/(.{4})/g, "$1 ").trim()}</code>
            </li>
            <li>
              <CodeForm
                id="enrol-code"
                label={t("security.codeItShows")}
                action={t("security.turnOn")}
                onSubmit={async (code) => {
                  const { recoveryCodes } = await post<{ recoveryCodes: string[] }>("/account/two-factor/confirm", { code });
                  setEnrolment(undefined);
                  setCodes(recoveryCodes);
                  twoFactorChanged(true);
                  notify(t("security.isOn"), "info");
                }}
              />
            </li>
          </ol>
        </section>
      ) : (
        <section className="card stack" aria-labelledby="two-factor-off-title">
          <h2 id="two-factor-off-title">{t("security.isOffTitle")}</h2>
          <p>{t("security.whyOn")}</p>
          <button type="button" className="primary" onClick={begin}>
            {t("security.turnOnButton")}
          </button>
        </section>
      )}
    </div>
  );
}
