// Sign up and sign in: email and password; the server sets the session cookie.
import { useEffect, useRef, useState, type FormEvent } from "react";
import { ApiError, post } from "../api.ts";
import { InlineMessage } from "../components/ui.tsx";
import { Link, useRouter } from "../router.tsx";
import { OidcOnlySignIn, OidcSignInButton } from "./OidcSignIn.tsx";
import { useSession } from "../session.tsx";
import type { Invitation, SessionUser } from "../types.ts";
import { currentLocale, t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

function AuthFrame({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <main id="main" className="auth" tabIndex={-1}>
      <div className="auth-card">
        <p className="brand auth-brand">{t("app.name")}</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

/** A field's error under it, named `<id>-error` for the field's aria-describedby. */
function FieldError({ id, error }: { id: string; error?: string }) {
  return error ? (
    <div id={`${id}-error`}>
      <InlineMessage kind="error">{error}</InlineMessage>
    </div>
  ) : null;
}

/** A new password's field: the browser's password manager offers one, and identity's reason shows below it. */
function NewPasswordField({ id, label, error, hint }: { id: string; label: string; error?: string; hint?: boolean }) {
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name="password"
        type="password"
        autoComplete="new-password"
        minLength={8}
        maxLength={200}
        required
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
      />
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {t("auth.passwordHint")}
        </p>
      )}
      <FieldError id={id} error={error} />
    </div>
  );
}

/** The server's reason for refusing a new password (a 400 about the password), to show at the field. */
export function passwordRefusal(err: unknown): string | undefined {
  if (!(err instanceof ApiError) || err.status !== 400) return undefined;
  const message = err.message.replace(/^body\./, "");
  return message.startsWith("password") ? `P${message.slice(1)}` : undefined;
}

export function SignUpPage() {
  const { signedIn, signUpPolicy, signIn } = useSession();
  const { navigate } = useRouter();
  const [error, setError] = useState<string>();
  const [passwordError, setPasswordError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    setPasswordError(undefined);
    try {
      const res = await post<Started>("/auth/signup", {
        name: String(data.get("name") ?? ""),
        email: String(data.get("email") ?? ""),
        password: String(data.get("password") ?? ""),
      });
      signedIn(res.user, res.csrfToken);
      navigate("/forms", { replace: true });
    } catch (err) {
      const refusal = passwordRefusal(err);
      if (refusal) setPasswordError(refusal);
      else setError(err instanceof ApiError && err.status === 409 ? t("auth.accountExists") : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  if (!signIn.passwordSignIn) {
    return (
      <AuthFrame title={t("title.signUp")}>
        <OidcOnlySignIn signingUp />
      </AuthFrame>
    );
  }
  if (signUpPolicy.mode === "invite-only") {
    return (
      <AuthFrame title={t("title.signUp")}>
        <InlineMessage kind="info">{t("auth.inviteOnly")}</InlineMessage>
        <p className="auth-switch">
          {tRich("auth.haveAccount", { link: (chunks) => <Link to="/signin">{chunks}</Link> })}
        </p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title={t("title.signUp")}>
      <OidcSignInButton />
      <form onSubmit={submit} className="stack" aria-describedby={error ? "auth-error" : undefined}>
        <div className="field">
          <label htmlFor="signup-name">{t("account.name")}</label>
          <input id="signup-name" name="name" autoComplete="name" maxLength={100} />
        </div>
        <div className="field">
          <label htmlFor="signup-email">{t("account.email")}</label>
          <input id="signup-email" name="email" type="email" autoComplete="email" required aria-describedby={signUpPolicy.mode === "domains" ? "signup-domains" : undefined} />
          {signUpPolicy.mode === "domains" && (
            <p className="hint" id="signup-domains">
              {t("auth.domains", { domains: new Intl.ListFormat(currentLocale(), { type: "disjunction" }).format(signUpPolicy.domains) })}
            </p>
          )}
        </div>
        <NewPasswordField id="signup-password" label={t("auth.password")} error={passwordError} hint />
        {error && (
          <div id="auth-error">
            <InlineMessage kind="error">{error}</InlineMessage>
          </div>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t("auth.creating") : t("auth.create")}
        </button>
      </form>
      <p className="auth-switch">
        {tRich("auth.haveAccount", { link: (chunks) => <Link to="/signin">{chunks}</Link> })}
      </p>
    </AuthFrame>
  );
}

/** What the routes that start a session answer. */
interface Started {
  user: SessionUser;
  csrfToken: string;
  /** A workspace of the person requires a second factor they do not have yet. */
  twoFactorRequired?: boolean;
}

/** Where a new session goes first: turning a second factor on, when a workspace requires one. */
const landingOf = (started: Started, otherwise: string) => (started.twoFactorRequired ? "/settings/security" : otherwise);

/** The field of a second factor's code: 6 digits of the authenticator app, or a recovery code. */
function SecondFactorField({ id, error }: { id: string; error?: string }) {
  return (
    <div className="field">
      <label htmlFor={id}>{t("auth.code")}</label>
      <input
        id={id}
        name="code"
        autoComplete="one-time-code"
        inputMode="text"
        maxLength={40}
        required
        autoFocus
        aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
        aria-invalid={error ? true : undefined}
      />
      <p className="hint" id={`${id}-hint`}>
        {t("auth.codeHint")}
      </p>
      <FieldError id={id} error={error} />
    </div>
  );
}

export function SignInPage() {
  const { signedIn, signedOutReason, signIn } = useSession();
  const { navigate } = useRouter();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  /** Set once the password passed for a person with a second factor: the code is asked next. */
  const [challenge, setChallenge] = useState<string>();
  const started = (res: Started) => {
    signedIn(res.user, res.csrfToken, res.twoFactorRequired);
    navigate(landingOf(res, "/forms"), { replace: true });
  };
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const res = await post<Started | { twoFactorRequired: true; challenge: string }>("/auth/signin", {
        email: String(data.get("email") ?? ""),
        password: String(data.get("password") ?? ""),
      });
      if ("challenge" in res) setChallenge(res.challenge);
      else started(res);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const submitCode = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      started(await post<Started>("/auth/signin/second-factor", { challenge, code: String(new FormData(event.currentTarget).get("code") ?? "") }));
    } catch (err) {
      // An ended challenge (too long, too many wrong codes) starts over at the password.
      if (err instanceof ApiError && err.status === 401) setChallenge(undefined);
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  if (challenge) {
    return (
      <AuthFrame title={t("auth.twoFactorTitle")}>
        <form onSubmit={submitCode} className="stack">
          <SecondFactorField id="signin-code" error={error} />
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t("auth.checking") : t("title.signIn")}
          </button>
        </form>
        <p className="auth-switch">
          <button type="button" className="link" onClick={() => setChallenge(undefined)}>
            {t("auth.startOver")}
          </button>
        </p>
      </AuthFrame>
    );
  }
  if (!signIn.passwordSignIn) {
    return (
      <AuthFrame title={t("title.signIn")}>
        <OidcOnlySignIn />
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title={t("title.signIn")}>
      {signedOutReason && <InlineMessage kind="info">{t("auth.signedOutReason", { reason: signedOutReason })}</InlineMessage>}
      <OidcSignInButton />
      <form onSubmit={submit} className="stack">
        <div className="field">
          <label htmlFor="signin-email">{t("account.email")}</label>
          <input id="signin-email" name="email" type="email" autoComplete="username" required />
        </div>
        <div className="field">
          <label htmlFor="signin-password">{t("auth.password")}</label>
          <input id="signin-password" name="password" type="password" autoComplete="current-password" required />
        </div>
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t("auth.signingIn") : t("title.signIn")}
        </button>
      </form>
      <p className="auth-switch">
        {tRich("auth.newHere", { link: (chunks) => <Link to="/signup">{chunks}</Link> })} · <Link to="/forgot-password">{t("auth.forgot")}</Link>
      </p>
    </AuthFrame>
  );
}

/** The token of a mailed link (`?token=…`). */
function linkToken(): string {
  return new URLSearchParams(window.location.search).get("token") ?? "";
}

export function ForgotPasswordPage() {
  const [sent, setSent] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const res = await post<{ message: string }>("/auth/password-reset", { email: String(new FormData(event.currentTarget).get("email") ?? "") });
      setSent(res.message);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthFrame title={t("title.forgotPassword")}>
      {sent ? (
        <InlineMessage kind="info">{t("auth.resetSent")}</InlineMessage>
      ) : (
        <form onSubmit={submit} className="stack">
          <div className="field">
            <label htmlFor="forgot-email">{t("account.email")}</label>
            <input id="forgot-email" name="email" type="email" autoComplete="username" required />
          </div>
          {error && <InlineMessage kind="error">{error}</InlineMessage>}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t("auth.sending") : t("auth.mailLink")}
          </button>
        </form>
      )}
      <p className="auth-switch">
        <Link to="/signin">{t("auth.backToSignIn")}</Link>
      </p>
    </AuthFrame>
  );
}

export function ResetPasswordPage() {
  const { signedIn } = useSession();
  const { navigate } = useRouter();
  const [error, setError] = useState<string>();
  const [passwordError, setPasswordError] = useState<string>();
  /** The account has a second factor: its code is asked too (the server said so on the field). */
  const [codeError, setCodeError] = useState<string>();
  const [codeAsked, setCodeAsked] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setPasswordError(undefined);
    setCodeError(undefined);
    const form = new FormData(event.currentTarget);
    try {
      const res = await post<Started>("/auth/password-reset/complete", {
        token: linkToken(),
        password: String(form.get("password") ?? ""),
        deleteApiKeys: form.get("deleteApiKeys") === "on",
        ...(codeAsked ? { secondFactorCode: String(form.get("code") ?? "") } : {}),
      });
      signedIn(res.user, res.csrfToken, res.twoFactorRequired);
      navigate(landingOf(res, "/forms"), { replace: true });
    } catch (err) {
      const refusal = passwordRefusal(err);
      const codeProblem = err instanceof ApiError ? err.fields.find((f) => f.key === "second_factor_code") : undefined;
      if (refusal) setPasswordError(refusal);
      else if (codeProblem) {
        // The first ask is no error: the form just needs the code.
        if (codeAsked) setCodeError(codeProblem.message[0].toUpperCase() + codeProblem.message.slice(1));
        setCodeAsked(true);
      } else setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthFrame title={t("title.resetPassword")}>
      <form onSubmit={submit} className="stack">
        <NewPasswordField id="reset-password" label={t("auth.newPassword")} error={passwordError} />
        {codeAsked && <SecondFactorField id="reset-code" error={codeError} />}
        <ApiKeysChoice />
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t("editor.saving") : t("auth.setPassword")}
        </button>
      </form>
    </AuthFrame>
  );
}

/** The reset form's box for the account's API keys: on by default, as someone else may have made them. */
export function ApiKeysChoice() {
  return (
    <div className="field">
      <label className="check">
        <input type="checkbox" name="deleteApiKeys" defaultChecked aria-describedby="reset-keys-hint" /> {t("auth.deleteKeys")}
      </label>
      <p className="hint" id="reset-keys-hint">
        {t("auth.deleteKeysHint")}
      </p>
    </div>
  );
}

export function VerifyEmailPage() {
  const [state, setState] = useState<{ done?: boolean; error?: string }>({});
  // The link works once: a second run of the effect (React's development mode) must not use it again.
  const sent = useRef(false);
  useEffect(() => {
    if (sent.current) return;
    sent.current = true;
    post("/auth/verify-email", { token: linkToken() }).then(
      () => setState({ done: true }),
      (err: unknown) => setState({ error: (err as Error).message }),
    );
  }, []);
  return (
    <AuthFrame title={t("title.verifyEmail")}>
      {state.done && <InlineMessage kind="info">{t("auth.confirmed")}</InlineMessage>}
      {state.error && <InlineMessage kind="error">{state.error}</InlineMessage>}
      {!state.done && !state.error && <p>{t("auth.confirming")}</p>}
      <p className="auth-switch">
        <Link to="/forms">{t("auth.goToApp")}</Link>
      </p>
    </AuthFrame>
  );
}

/** The mailed invitation's page: signs the invited person up into the workspace, or adds them when signed in. */
export function AcceptInvitePage() {
  const { user, signedIn } = useSession();
  const { navigate } = useRouter();
  const [invitation, setInvitation] = useState<Invitation>();
  const [error, setError] = useState<string>();
  const [passwordError, setPasswordError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    post<NonNullable<typeof invitation>>("/invitations/lookup", { token: linkToken() }).then(setInvitation, (err: Error) => setError(err.message));
  }, []);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    setPasswordError(undefined);
    try {
      const res = await post<Partial<Started> & { user: SessionUser }>("/invitations/accept", {
        token: linkToken(),
        ...(user ? {} : { name: String(form.get("name") ?? ""), password: String(form.get("password") ?? "") }),
      });
      if (res.csrfToken) signedIn(res.user, res.csrfToken, res.twoFactorRequired);
      navigate(res.twoFactorRequired ? "/settings/security" : "/workspaces", { replace: true });
    } catch (err) {
      const refusal = passwordRefusal(err);
      if (refusal) setPasswordError(refusal);
      else setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const { signIn } = useSession();
  const canSignUp = invitation && !user && !invitation.accountExists && signIn.passwordSignIn;
  return (
    <AuthFrame title={t("title.acceptInvite")}>
      {invitation && (
        <p>
          {t("auth.invited", { inviter: invitation.inviterName, email: invitation.email, workspace: invitation.workspaceName, role: invitation.role === "admin" ? "admin" : "member" })}
        </p>
      )}
      {invitation && !user && invitation.accountExists && signIn.passwordSignIn && (
        <p>
          {tRich("auth.inviteAccountExists", {
            signIn: (chunks) => <Link to="/signin">{chunks}</Link>,
            reset: (chunks) => <Link to="/forgot-password">{chunks}</Link>,
          })}
        </p>
      )}
      {invitation && !user && !signIn.passwordSignIn && (
        <>
          <p>{t("auth.inviteSignInFirst")}</p>
          <OidcSignInButton />
        </>
      )}
      {invitation && (user || canSignUp) && (
        <form onSubmit={submit} className="stack">
          {canSignUp && (
            <>
              <div className="field">
                <label htmlFor="invite-name">{t("auth.yourName")}</label>
                <input id="invite-name" name="name" autoComplete="name" maxLength={100} />
              </div>
              <NewPasswordField id="invite-password" label={t("auth.password")} error={passwordError} />
            </>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t("auth.joining") : user ? t("auth.join", { workspace: invitation.workspaceName }) : t("auth.createAndJoin")}
          </button>
        </form>
      )}
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
    </AuthFrame>
  );
}
