// The frame of every signed-in page: a skip link, the header with navigation, the workspace switcher and
// sign out, then the page.
import { useId, type ReactNode } from "react";
import { Link, useRouter } from "../router.tsx";
import { useSession } from "../session.tsx";
import { useNotify } from "./ui.tsx";

const nav = [
  { to: "/forms", label: "Forms", match: (p: string) => p === "/" || p.startsWith("/forms") },
  { to: "/trash", label: "Trash", match: (p: string) => p.startsWith("/trash") },
  { to: "/workspaces", label: "Workspaces", match: (p: string) => p.startsWith("/workspaces") },
  { to: "/settings/api-keys", label: "API keys", match: (p: string) => p === "/settings" || p.startsWith("/settings/api-keys") },
  { to: "/settings/security", label: "Security", match: (p: string) => p.startsWith("/settings/security") },
];
/** Shown to the installation's administrator alone. */
const adminNav = { to: "/admin", label: "Administration", match: (p: string) => p.startsWith("/admin") };
/** Shown to the shown workspace's owner and admins. */
const auditNav = { to: "/audit-log", label: "Audit log", match: (p: string) => p.startsWith("/audit-log") };

export function Layout({ children }: { children: ReactNode }) {
  const { user, workspaces, workspace, selectWorkspace, signOut, signOutEverywhere } = useSession();
  const { location, navigate, mayLeave } = useRouter();
  const notify = useNotify();
  const switcherId = useId();
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/forms" className="brand">
          formsvc
        </Link>
        <nav aria-label="Main">
          <ul>
            {[...nav, ...(workspace?.role === "owner" || workspace?.role === "admin" ? [auditNav] : []), ...(user?.administrator ? [adminNav] : [])].map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={item.match(location.path) ? "page" : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-end">
          {workspaces.length > 0 && (
            <div className="switcher">
              <label htmlFor={switcherId}>Workspace</label>
              <select
                id={switcherId}
                value={workspace?.id ?? ""}
                onChange={async (e) => {
                  const chosen = workspaces.find((w) => w.id === e.target.value);
                  // A form's page belongs to the workspace being left.
                  const leavesForm = location.path.startsWith("/forms/");
                  if (leavesForm && !(await mayLeave("/forms"))) return;
                  selectWorkspace(e.target.value);
                  notify(`Switched to ${chosen?.name ?? "the workspace"}.`, "info");
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
              notify("You are signed out.", "info");
            }}
          >
            Sign out
          </button>
          <button
            type="button"
            title="Ends your session in every browser and device"
            onClick={async () => {
              if (!(await mayLeave("/signin"))) return;
              let ended: number;
              try {
                ended = await signOutEverywhere();
              } catch (err) {
                // Every session is still valid: say so, and stay.
                notify(`Signing out everywhere failed: ${(err as Error).message}`, "error");
                return;
              }
              navigate("/signin", { replace: true, force: true });
              notify(`You are signed out everywhere (${ended} ${ended === 1 ? "session" : "sessions"} ended).`, "info");
            }}
          >
            Sign out everywhere
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
