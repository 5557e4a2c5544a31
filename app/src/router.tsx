// A small router over the History API for paths under /app: enough for this app, no dependency.
import { createContext, useContext, useEffect, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from "react";

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

const RouterContext = createContext<{ location: Location; navigate: (to: string, options?: { replace?: boolean }) => void }>({
  location: { path: "/", search: "" },
  navigate: () => {},
});

function current(): Location {
  return { path: appPath(window.location.pathname), search: window.location.search };
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState<Location>(current);
  useEffect(() => {
    const onPop = () => setLocation(current());
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  const navigate = (to: string, options: { replace?: boolean } = {}) => {
    const url = basePath + (to === "/" ? "/" : to);
    if (options.replace) window.history.replaceState(null, "", url);
    else window.history.pushState(null, "", url);
    setLocation(current());
    window.scrollTo(0, 0);
  };
  return <RouterContext.Provider value={{ location, navigate }}>{children}</RouterContext.Provider>;
}

export function useRouter() {
  return useContext(RouterContext);
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
