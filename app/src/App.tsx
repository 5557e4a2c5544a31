// Routes of the app. Signed-out visitors see Sign in / Sign up; everything else needs a session.
import { useEffect } from "react";
import { Layout } from "./components/Layout.tsx";
import { ConfirmProvider, ErrorState, Loading, NoticeProvider } from "./components/ui.tsx";
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

const titles: [string, string][] = [
  ["/signin", "Sign in"],
  ["/signup", "Create your account"],
  ["/forgot-password", "Set a new password"],
  ["/reset-password", "Choose a new password"],
  ["/verify-email", "Confirm your email address"],
  ["/accept-invite", "Join a workspace"],
  ["/forms", "Forms"],
  ["/trash", "Trash"],
  ["/workspaces", "Workspaces"],
  ["/settings/api-keys", "API keys"],
  ["/settings/security", "Security"],
  ["/admin", "Administration"],
  ["/audit-log", "Audit log"],
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
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. <Link to="/forms">Go to your forms</Link>.
      </p>
    </div>
  );
}

function Routes() {
  const { user, twoFactorRequired, checking, error, retry } = useSession();
  const { location } = useRouter();
  const path = location.path;

  useEffect(() => {
    const title = titles.find(([p]) => path.startsWith(p))?.[1];
    document.title = title ? `${title} · formsvc` : "formsvc";
    // Move focus to the page for screen readers after a navigation.
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [path]);

  if (checking) return <Loading what="Starting" />;
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

export function App() {
  return (
    <RouterProvider>
      <NoticeProvider>
        <ConfirmProvider>
          <SessionProvider>
            <Routes />
          </SessionProvider>
        </ConfirmProvider>
      </NoticeProvider>
    </RouterProvider>
  );
}
