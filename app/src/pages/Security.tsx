// Settings → Security: two-factor sign-in. Turning it on shows a QR code (and the secret, to type) for an
// authenticator app, asks one of its codes, then shows the ten recovery codes once. A workspace that
// requires it brings its members here before anything else.
import { useState, type FormEvent } from "react";
import { get, post } from "../api.ts";
import { ErrorState, InlineMessage, Loading, useLoad, useNotify } from "../components/ui.tsx";
import { copyText } from "../lib/clipboard.ts";
import { useSession } from "../session.tsx";

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
      <h2 id="recovery-codes-title">Your recovery codes</h2>
      <p>
        Each signs you in once when your authenticator is not at hand. Keep them somewhere safe (a password manager): they are shown only now.
      </p>
      <ul className="recovery-codes" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div className="row">
        <button type="button" onClick={() => copyText(text).then(() => notify("Recovery codes copied.", "info"))}>
          Copy
        </button>
        <a className="button" href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`} download="formsvc-recovery-codes.txt">
          Download
        </a>
        <button type="button" className="primary" onClick={onDone}>
          I have saved them
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
        {busy ? "Checking…" : action}
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

  if (status.loading && !status.data) return <Loading what="Loading your security settings" />;
  if (status.error) return <ErrorState message={status.error} onRetry={status.reload} />;
  const { enabled, recoveryCodesLeft, requiredBy } = status.data!;

  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Security</h1>
          <p className="muted">Two-factor sign-in asks, after your password, for a code of an authenticator app on your phone.</p>
        </div>
      </div>
      {twoFactorRequired && (
        <InlineMessage kind="info">
          {requiredBy.join(", ")} {requiredBy.length === 1 ? "requires" : "require"} two-factor sign-in of its members: turn it on to go on.
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
          <h2 id="two-factor-title">Two-factor sign-in is on</h2>
          <p>
            {recoveryCodesLeft} of 10 recovery codes left.{recoveryCodesLeft <= 3 && " Make new ones before you run out."}
          </p>
          <h3>New recovery codes</h3>
          <CodeForm
            id="recovery-code"
            label="A code of your authenticator"
            action="Make new recovery codes"
            onSubmit={async (code) => setCodes((await post<{ recoveryCodes: string[] }>("/account/two-factor/recovery-codes", { code })).recoveryCodes)}
          />
          <h3>Turn it off</h3>
          {requiredBy.length > 0 ? (
            <p className="muted">It stays on while {requiredBy.join(", ")} requires it.</p>
          ) : (
            <CodeForm
              id="disable-code"
              label="A code of your authenticator, or a recovery code"
              action="Turn two-factor sign-in off"
              onSubmit={async (code) => {
                await post("/account/two-factor/disable", { code });
                twoFactorChanged(false);
                notify("Two-factor sign-in is off.", "info");
                status.reload();
              }}
            />
          )}
        </section>
      ) : enrolment ? (
        <section className="card stack" aria-labelledby="enrol-title">
          <h2 id="enrol-title">Set up your authenticator</h2>
          <ol className="stack">
            <li>
              Scan this QR code with an authenticator app (1Password, Google Authenticator, Authy, Aegis…).
              <div className="qr-code" role="img" aria-label="QR code of your authenticator secret" dangerouslySetInnerHTML={{ __html: enrolment.qrCodeSvg }} />
              Or type the key: <code data-testid="totp-secret">{enrolment.secret.replace(/(.{4})/g, "$1 ").trim()}</code>
            </li>
            <li>
              <CodeForm
                id="enrol-code"
                label="The 6-digit code it shows"
                action="Turn two-factor sign-in on"
                onSubmit={async (code) => {
                  const { recoveryCodes } = await post<{ recoveryCodes: string[] }>("/account/two-factor/confirm", { code });
                  setEnrolment(undefined);
                  setCodes(recoveryCodes);
                  twoFactorChanged(true);
                  notify("Two-factor sign-in is on.", "info");
                }}
              />
            </li>
          </ol>
        </section>
      ) : (
        <section className="card stack" aria-labelledby="two-factor-off-title">
          <h2 id="two-factor-off-title">Two-factor sign-in is off</h2>
          <p>With it on, your password alone does not sign anyone in.</p>
          <button type="button" className="primary" onClick={begin}>
            Turn on two-factor sign-in
          </button>
        </section>
      )}
    </div>
  );
}
