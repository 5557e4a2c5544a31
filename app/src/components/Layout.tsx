// The frame of every signed-in page: a skip link, the header (one row from 1024 px: navigation, the
// workspace switcher and the account menu), then the page.
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { applyTheme, storedTheme, themeChoices, type ThemeChoice } from "../lib/theme.ts";
import { Link, useRouter } from "../router.tsx";
import { useSession } from "../session.tsx";
import { useNotify } from "./ui.tsx";
import { t, type MessageKey } from "../i18n/messages.ts";

interface NavItem {
  to: string;
  labelKey: MessageKey;
  match: (p: string) => boolean;
}
const nav: NavItem[] = [
  { to: "/forms", labelKey: "nav.forms", match: (p) => p === "/" || p.startsWith("/forms") },
  { to: "/trash", labelKey: "nav.trash", match: (p) => p.startsWith("/trash") },
  { to: "/workspaces", labelKey: "nav.workspaces", match: (p) => p.startsWith("/workspaces") },
];
/** The person's own pages, in the account menu. */
const accountNav: NavItem[] = [
  { to: "/settings/account", labelKey: "nav.account", match: (p) => p.startsWith("/settings/account") },
  { to: "/settings/api-keys", labelKey: "nav.apiKeys", match: (p) => p === "/settings" || p.startsWith("/settings/api-keys") },
  { to: "/settings/security", labelKey: "nav.security", match: (p) => p.startsWith("/settings/security") },
];
const themeLabels: Record<ThemeChoice, MessageKey> = { system: "layout.themeSystem", light: "layout.themeLight", dark: "layout.themeDark" };
/** Shown to the installation's administrator alone, in the account menu. */
const adminNav: NavItem = { to: "/admin", labelKey: "nav.administration", match: (p) => p.startsWith("/admin") };
/** Shown to the shown workspace's owner and admins. */
const auditNav: NavItem = { to: "/audit-log", labelKey: "nav.auditLog", match: (p) => p.startsWith("/audit-log") };

/** A list of the app's own pages, the current one marked for assistive technology and the styles. */
function NavLinks({ items, className }: { items: NavItem[]; className?: string }) {
  const { location } = useRouter();
  return (
    <ul className={className}>
      {items.map((item) => (
        <li key={item.to}>
          <Link to={item.to} aria-current={item.match(location.path) ? "page" : undefined}>
            {t(item.labelKey)}
          </Link>
        </li>
      ))}
    </ul>
  );
}

export function Layout({ children }: { children: ReactNode }) {
  const { user, workspaces, workspace, selectWorkspace } = useSession();
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
          <NavLinks items={[...nav, ...(workspace?.role === "owner" || workspace?.role === "admin" ? [auditNav] : [])]} />
        </nav>
        <div className="topbar-end">
          {workspaces.length > 0 && (
            <div className="switcher">
              <label htmlFor={switcherId} className="sr-only">
                {t("layout.workspace")}
              </label>
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
          <AccountMenu />
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

/**
 * The person's menu: who is signed in, their own pages (and the installation's, for its administrator), the
 * theme, and both ways to sign out. A disclosure
 * (a button and the panel it shows), closed by Escape, a click elsewhere or a choice.
 */
function AccountMenu() {
  const { user, signOut, signOutEverywhere } = useSession();
  const { location, navigate, mayLeave } = useRouter();
  const notify = useNotify();
  const [open, setOpen] = useState(false);
  const [theme, setTheme] = useState<ThemeChoice>(storedTheme);
  const menuId = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  useEffect(() => setOpen(false), [location.path]);
  useEffect(() => {
    if (!open) return;
    const onPointer = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener("pointerdown", onPointer);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("pointerdown", onPointer);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  const choose = (choice: ThemeChoice) => {
    applyTheme(choice);
    setTheme(choice);
  };

  return (
    <div className="account" ref={root}>
      <button ref={button} type="button" className="account-button" aria-expanded={open} aria-controls={menuId} aria-label={t("layout.accountMenu", { name: user?.name ?? "" })} onClick={() => setOpen(!open)}>
        <span className="who">{user?.name}</span>
        <span aria-hidden="true">▾</span>
      </button>
      <div id={menuId} className="account-panel" hidden={!open}>
        <p className="account-who">
          <strong>{user?.name}</strong>
          <br />
          <span className="muted">{user?.email}</span>
        </p>
        <NavLinks className="account-links" items={[...accountNav, ...(user?.administrator ? [adminNav] : [])]} />
        <div className="account-theme" role="group" aria-label={t("layout.theme")}>
          <span aria-hidden="true">{t("layout.theme")}</span>
          <div className="segmented">
            {themeChoices.map((choice) => (
              <button key={choice} type="button" className={theme === choice ? "selected" : undefined} aria-pressed={theme === choice} onClick={() => choose(choice)}>
                {t(themeLabels[choice])}
              </button>
            ))}
          </div>
        </div>
        <div className="account-actions">
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
      </div>
    </div>
  );
}
