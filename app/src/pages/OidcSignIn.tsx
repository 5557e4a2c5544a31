// Signing in through the installation's OpenID Connect provider (OIDC_*): the button that starts it (a full page
// load: the gateway sends the browser to the provider and back), and the sign-in and sign-up pages' content when
// the provider is the only way in (OIDC_ONLY).
import { InlineMessage } from "../components/ui.tsx";
import { useSession } from "../session.tsx";
import { t } from "../i18n/messages.ts";

/** "Sign in with <provider>", when one is configured. */
export function OidcSignInButton() {
  const { signIn } = useSession();
  if (!signIn.oidc) return null;
  return (
    <a className="button oidc-sign-in" href="/app/api/auth/oidc/start">
      {t("oidc.signInWith", { provider: signIn.oidc.name })}
    </a>
  );
}

/** The sign-in and sign-up pages under OIDC_ONLY: the provider's button and why there is no password form. */
export function OidcOnlySignIn({ signingUp }: { signingUp?: boolean }) {
  const { signIn, signedOutReason } = useSession();
  return (
    <div className="stack">
      {signedOutReason && <InlineMessage kind="info">{t("auth.signedOutReason", { reason: signedOutReason })}</InlineMessage>}
      <p>{signingUp ? t("oidc.signUpOnly", { provider: signIn.oidc?.name ?? "" }) : t("oidc.signInOnly", { provider: signIn.oidc?.name ?? "" })}</p>
      <OidcSignInButton />
    </div>
  );
}
