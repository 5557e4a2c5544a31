// Routes of the app. Signed-out visitors see Sign in / Sign up; everything else needs a session.
import { useEffect, type ReactNode } from "react";
import { Layout } from "./components/Layout.tsx";
import { ConfirmProvider, ErrorState, Loading, NoticeProvider } from "./components/ui.tsx";
import { t, type MessageKey } from "./i18n/messages.ts";
import { I18nProvider, tRich } from "./i18n/react.tsx";
import { AccountPage } from "./pages/Account.tsx";
import { AdministrationPage } from "./pages/Administration.tsx";
import { ApiKeysPage } from "./pages/ApiKeys.tsx";
import { AuditLogPage } from "./pages/AuditLog.tsx";
import { AcceptInvitePage, ForgotPasswordPage, ResetPasswordPage, SignInPage, SignUpPage, VerifyEmailPage } from "./pages/Auth.tsx";
import { FormPage, type TabId } from "./pages/FormPage.tsx";
import { FormsPage, TrashPage } from "./pages/Forms.tsx";
import { SecurityPage } from "./pages/Security.tsx";
import { WorkspacesPage } from "./pages/Workspaces.tsx";
import { Link, matchRoute, RouterProvider, useRouter } from "./router.tsx";
import { SessionProvider, useSession } from "./session.tsx";

const titles: [string, MessageKey][] = [
  ["/signin", "title.signIn"],
  ["/signup", "title.signUp"],
  ["/forgot-password", "title.forgotPassword"],
  ["/reset-password", "title.resetPassword"],
  ["/verify-email", "title.verifyEmail"],
  ["/accept-invite", "title.acceptInvite"],
  ["/forms", "nav.forms"],
  ["/trash", "nav.trash"],
  ["/workspaces", "nav.workspaces"],
  ["/settings/api-keys", "nav.apiKeys"],
  ["/settings/security", "nav.security"],
  ["/settings/account", "nav.account"],
  ["/admin", "nav.administration"],
  ["/audit-log", "nav.auditLog"],
];

const formTabs = ["edit", "preview", "responses", "integrations", "share", "design", "settings"];

function Redirect({ to }: { to: string }) {
  const { navigate } = useRouter();
  useEffect(() => navigate(to, { replace: true }), [to]); // eslint-disable-line react-hooks/exhaustive-deps
  return null;
}

function NotFound() {
  return (
    <div className="page">
      <h1>{t("notFound.title")}</h1>
      <p>{tRich("notFound.text", { link: (chunks) => <Link to="/forms">{chunks}</Link> })}</p>
    </div>
  );
}

function Routes() {
  const { user, twoFactorRequired, checking, error, retry } = useSession();
  const { location } = useRouter();
  const path = location.path;

  useEffect(() => {
    const title = titles.find(([p]) => path.startsWith(p))?.[1];
    document.title = title ? `${t(title)} · ${t("app.name")}` : t("app.name");
    // Move focus to the page for screen readers after a navigation.
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [path]);

  if (checking) return <Loading what={t("app.starting")} />;
  if (error && !user) {
    return (
      <main id="main" className="page">
        <ErrorState message={error} onRetry={retry} />
      </main>
    );
  }
  // The pages of mailed links work signed in or out.
  if (path === "/reset-password") return <ResetPasswordPage />;
  if (path === "/verify-email") return <VerifyEmailPage />;
  if (path === "/accept-invite") return <AcceptInvitePage />;
  if (!user) {
    if (path === "/forgot-password") return <ForgotPasswordPage />;
    if (path === "/signup") return <SignUpPage />;
    if (path === "/signin") return <SignInPage />;
    return <Redirect to="/signin" />;
  }
  if (path === "/signin" || path === "/signup" || path === "/") return <Redirect to="/forms" />;
  // A workspace of the person requires a second factor they have not turned on: nothing else until they do.
  if (twoFactorRequired && path !== "/settings/security") return <Redirect to="/settings/security" />;

  let page;
  let params: Record<string, string> | undefined;
  if (path === "/forms") page = <FormsPage />;
  else if (path === "/trash") page = <TrashPage />;
  else if (path === "/workspaces") page = <WorkspacesPage />;
  else if (path === "/settings" || path === "/settings/api-keys") page = <ApiKeysPage />;
  else if (path === "/settings/security") page = <SecurityPage />;
  else if (path === "/settings/account") page = <AccountPage />;
  else if (path === "/admin") page = <AdministrationPage />;
  else if (path === "/audit-log") page = <AuditLogPage />;
  else if ((params = matchRoute("/forms/:id", path))) page = <Redirect to={`/forms/${params.id}/edit`} />;
  else if (
    (params = matchRoute("/forms/:id/responses/:sid", path)) ||
    ((params = matchRoute("/forms/:id/:tab", path)) && formTabs.includes(params.tab))
  ) {
    // One element for every tab of a form, so switching tabs keeps the editor's unsaved draft.
    page = <FormPage key={params.id} formId={params.id} tab={(params.tab ?? "responses") as TabId} sub={params.sid} />;
  } else page = <NotFound />;
  return <Layout>{page}</Layout>;
}

/** The app speaks the signed-in person's language, else the browser's. */
function SessionLanguage({ children }: { children: ReactNode }) {
  const { user } = useSession();
  return <I18nProvider locale={user?.locale}>{children}</I18nProvider>;
}

export function App() {
  return (
    <RouterProvider>
      <NoticeProvider>
        <ConfirmProvider>
          <SessionProvider>
            <SessionLanguage>
              <Routes />
            </SessionLanguage>
          </SessionProvider>
        </ConfirmProvider>
      </NoticeProvider>
    </RouterProvider>
  );
}
