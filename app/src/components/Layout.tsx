// The frame of every signed-in page: a skip link, the header with navigation, the workspace switcher and
// sign out, then the page.
import { useId, type ReactNode } from "react";
import { Link, useRouter } from "../router.tsx";
import { useSession } from "../session.tsx";
import { useNotify } from "./ui.tsx";
import { t, type MessageKey } from "../i18n/messages.ts";

const nav: { to: string; labelKey: MessageKey; match: (p: string) => boolean }[] = [
  { to: "/forms", labelKey: "nav.forms", match: (p: string) => p === "/" || p.startsWith("/forms") },
  { to: "/trash", labelKey: "nav.trash", match: (p: string) => p.startsWith("/trash") },
  { to: "/workspaces", labelKey: "nav.workspaces", match: (p: string) => p.startsWith("/workspaces") },
  { to: "/settings/api-keys", labelKey: "nav.apiKeys", match: (p: string) => p === "/settings" || p.startsWith("/settings/api-keys") },
  { to: "/settings/security", labelKey: "nav.security", match: (p: string) => p.startsWith("/settings/security") },
  { to: "/settings/account", labelKey: "nav.account", match: (p: string) => p.startsWith("/settings/account") },
];
/** Shown to the installation's administrator alone. */
const adminNav = { to: "/admin", labelKey: "nav.administration" as const, match: (p: string) => p.startsWith("/admin") };
/** Shown to the shown workspace's owner and admins. */
const auditNav = { to: "/audit-log", labelKey: "nav.auditLog" as const, match: (p: string) => p.startsWith("/audit-log") };

export function Layout({ children }: { children: ReactNode }) {
  const { user, workspaces, workspace, selectWorkspace, signOut, signOutEverywhere } = useSession();
  const { location, navigate, mayLeave } = useRouter();
  const notify = useNotify();
  const switcherId = useId();
  return (
    <>
      <a className="skip-link" href="#main">
        {t("layout.skipToContent")}
      </a>
      <header className="topbar">
        <Link to="/forms" className="brand">
          {t("app.name")}
        </Link>
        <nav aria-label={t("layout.mainNav")}>
          <ul>
            {[...nav, ...(workspace?.role === "owner" || workspace?.role === "admin" ? [auditNav] : []), ...(user?.administrator ? [adminNav] : [])].map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={item.match(location.path) ? "page" : undefined}>
                  {t(item.labelKey)}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-end">
          {workspaces.length > 0 && (
            <div className="switcher">
              <label htmlFor={switcherId}>{t("layout.workspace")}</label>
              <select
                id={switcherId}
                value={workspace?.id ?? ""}
                onChange={async (e) => {
                  const chosen = workspaces.find((w) => w.id === e.target.value);
                  // A form's page belongs to the workspace being left.
                  const leavesForm = location.path.startsWith("/forms/");
                  if (leavesForm && !(await mayLeave("/forms"))) return;
                  selectWorkspace(e.target.value);
                  notify(chosen ? t("layout.switchedTo", { name: chosen.name }) : t("layout.switched"), "info");
                  if (leavesForm) navigate("/forms", { force: true });
                }}
              >
                {workspaces.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name}
                  </option>
                ))}
              </select>
            </div>
          )}
          <span className="who" title={user?.email}>
            {user?.name}
          </span>
          <button
            type="button"
            onClick={async () => {
              if (!(await mayLeave("/signin"))) return;
              await signOut().catch(() => undefined);
              navigate("/signin", { replace: true, force: true });
              notify(t("layout.signedOut"), "info");
            }}
          >
            {t("layout.signOut")}
          </button>
          <button
            type="button"
            title={t("layout.signOutEverywhereHint")}
            onClick={async () => {
              if (!(await mayLeave("/signin"))) return;
              let ended: number;
              try {
                ended = await signOutEverywhere();
              } catch (err) {
                // Every session is still valid: say so, and stay.
                notify(t("layout.signOutEverywhereFailed", { reason: (err as Error).message }), "error");
                return;
              }
              navigate("/signin", { replace: true, force: true });
              notify(t("layout.signedOutEverywhere", { ended }), "info");
            }}
          >
            {t("layout.signOutEverywhere")}
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
