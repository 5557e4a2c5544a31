// A small router over the History API for paths under /app: enough for this app, no dependency.
import { createContext, useContext, useEffect, useRef, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from "react";

export const basePath = "/app";

/** The app path of a browser path: `/app/forms/x` -> `/forms/x`; `/app` -> `/`. */
export function appPath(pathname: string): string {
  if (pathname === basePath || pathname === `${basePath}/`) return "/";
  if (pathname.startsWith(`${basePath}/`)) return pathname.slice(basePath.length).replace(/\/+$/, "") || "/";
  return "/";
}

/** The parameters of `path` when it matches `pattern` (`/forms/:id/edit`), else undefined. */
export function matchRoute(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split("/").filter(Boolean);
  const have = path.split("/").filter(Boolean);
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) {
      try {
        params[want[i].slice(1)] = decodeURIComponent(have[i]);
      } catch {
        return undefined;
      }
    } else if (want[i] !== have[i]) {
      return undefined;
    }
  }
  return params;
}

interface Location {
  path: string;
  search: string;
}

/**
 * Asked before the app leaves for `to` (an app path): undefined to go at once, or the person's answer
 * (true to go, false to stay).
 */
export type LeaveGuard = (to: string) => Promise<boolean> | undefined;

interface Router {
  location: Location;
  /** Goes to `to`, once the page's leave guard agrees (`force` skips it, e.g. after the page's thing is gone). */
  navigate: (to: string, options?: { replace?: boolean; force?: boolean }) => void;
  /** Whether the page may be left for `to`: asks its leave guard, for ways out that are not a navigation (sign out). */
  mayLeave: (to: string) => Promise<boolean>;
  /** The page's leave guard; undefined when it has nothing to lose. */
  setLeaveGuard: (guard: LeaveGuard | undefined) => void;
}

const RouterContext = createContext<Router>({
  location: { path: "/", search: "" },
  navigate: () => {},
  mayLeave: async () => true,
  setLeaveGuard: () => {},
});

function current(): Location {
  return { path: appPath(window.location.pathname), search: window.location.search };
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState<Location>(current);
  const guard = useRef<LeaveGuard | undefined>(undefined);
  /** The browser URL of the page shown, put back while Back waits for the page's answer. */
  const shown = useRef(window.location.pathname + window.location.search);
  /** Set while the browser goes back for a Back the page agreed to. */
  const agreedBack = useRef(false);
  const go = (url: string, replace: boolean) => {
    if (replace) window.history.replaceState(null, "", url);
    else window.history.pushState(null, "", url);
    shown.current = url;
    setLocation(current());
    window.scrollTo(0, 0);
  };
  useEffect(() => {
    const onPop = async () => {
      const url = window.location.pathname + window.location.search;
      const answer = agreedBack.current ? undefined : guard.current?.(appPath(window.location.pathname));
      agreedBack.current = false;
      if (!answer) {
        shown.current = url;
        setLocation(current());
        return;
      }
      // The browser has moved already: the page's URL goes back on while the page asks, and off when it agrees.
      window.history.pushState(null, "", shown.current);
      if (await answer) {
        agreedBack.current = true;
        window.history.back();
      }
    };
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  const mayLeave = (to: string) => guard.current?.(to) ?? Promise.resolve(true);
  const navigate: Router["navigate"] = (to, options = {}) => {
    const url = basePath + (to === "/" ? "/" : to);
    const answer = options.force ? undefined : guard.current?.(to.split("?")[0]);
    if (!answer) return go(url, options.replace ?? false);
    void answer.then((ok) => ok && go(url, options.replace ?? false));
  };
  const setLeaveGuard = (next: LeaveGuard | undefined) => {
    guard.current = next;
  };
  return <RouterContext.Provider value={{ location, navigate, mayLeave, setLeaveGuard }}>{children}</RouterContext.Provider>;
}

export function useRouter() {
  return useContext(RouterContext);
}

/** Keeps `guard` as the page's leave guard while the calling component is shown (undefined: none). */
export function useLeaveGuard(guard: LeaveGuard | undefined): void {
  const { setLeaveGuard } = useRouter();
  useEffect(() => {
    setLeaveGuard(guard);
    return () => setLeaveGuard(undefined);
  });
}

/** A link inside the app: a real `<a href>` (new tabs work), routed in place on a plain click. */
export function Link({ to, children, ...rest }: { to: string; children: ReactNode } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const { navigate } = useRouter();
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a {...rest} href={basePath + to} onClick={onClick}>
      {children}
    </a>
  );
}
