// Sign up and sign in: email and password; the server sets the session cookie.
import { useState, type FormEvent } from "react";
import { ApiError, post } from "../api.ts";
import { InlineMessage } from "../components/ui.tsx";
import { Link, useRouter } from "../router.tsx";
import { useSession } from "../session.tsx";
import type { User } from "../types.ts";

function AuthFrame({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <main id="main" className="auth" tabIndex={-1}>
      <div className="auth-card">
        <p className="brand auth-brand">Formsvc</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

export function SignUpPage() {
  const { signedIn } = useSession();
  const { navigate } = useRouter();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const res = await post<{ user: User; csrfToken: string }>("/auth/signup", {
        name: String(data.get("name") ?? ""),
        email: String(data.get("email") ?? ""),
        password: String(data.get("password") ?? ""),
      });
      signedIn(res.user, res.csrfToken);
      navigate("/forms", { replace: true });
    } catch (err) {
      setError(err instanceof ApiError && err.status === 409 ? "An account with this email exists already. Sign in instead." : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthFrame title="Create your account">
      <form onSubmit={submit} className="stack" aria-describedby={error ? "auth-error" : undefined}>
        <div className="field">
          <label htmlFor="signup-name">Name</label>
          <input id="signup-name" name="name" autoComplete="name" maxLength={100} />
        </div>
        <div className="field">
          <label htmlFor="signup-email">Email</label>
          <input id="signup-email" name="email" type="email" autoComplete="email" required />
        </div>
        <div className="field">
          <label htmlFor="signup-password">Password</label>
          <input id="signup-password" name="password" type="password" autoComplete="new-password" minLength={8} required aria-describedby="signup-password-hint" />
          <p className="hint" id="signup-password-hint">
            At least 8 characters.
          </p>
        </div>
        {error && (
          <div id="auth-error">
            <InlineMessage kind="error">{error}</InlineMessage>
          </div>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Creating account…" : "Create account"}
        </button>
      </form>
      <p className="auth-switch">
        Have an account? <Link to="/signin">Sign in</Link>
      </p>
    </AuthFrame>
  );
}

export function SignInPage() {
  const { signedIn } = useSession();
  const { navigate } = useRouter();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const res = await post<{ user: User; csrfToken: string }>("/auth/signin", {
        email: String(data.get("email") ?? ""),
        password: String(data.get("password") ?? ""),
      });
      signedIn(res.user, res.csrfToken);
      navigate("/forms", { replace: true });
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthFrame title="Sign in">
      <form onSubmit={submit} className="stack">
        <div className="field">
          <label htmlFor="signin-email">Email</label>
          <input id="signin-email" name="email" type="email" autoComplete="username" required />
        </div>
        <div className="field">
          <label htmlFor="signin-password">Password</label>
          <input id="signin-password" name="password" type="password" autoComplete="current-password" required />
        </div>
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p className="auth-switch">
        New here? <Link to="/signup">Create an account</Link>
      </p>
    </AuthFrame>
  );
}
