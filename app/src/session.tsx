// Who is signed in, their workspaces, and the workspace the app is showing.
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { ApiError, get, post, put, rememberCsrfToken, setSignedOutHandler } from "./api.ts";
import type { SessionUser, SignUpPolicy, Workspace } from "./types.ts";

const workspaceStorageKey = "formsvc:workspace";

interface SessionState {
  user: SessionUser | null;
  /** The person must turn a second factor on before anything else: a workspace of theirs requires it. */
  twoFactorRequired: boolean;
  /** The person turned their second factor on (or off): the session's user says so from now. */
  twoFactorChanged(enabled: boolean): void;
  /** Until the first /session answer. */
  checking: boolean;
  /** The /session request failed (not "signed out": the server could not be asked). */
  error?: string;
  /** Why the person was signed out, when the server said so (e.g. a cookie planted by another site). */
  signedOutReason?: string;
  /** Who may make an account here (SIGNUP); open until /session tells. */
  signUpPolicy: SignUpPolicy;
  /** How people sign in here (OIDC_*): the OpenID Connect provider's name, if any, and whether passwords are offered. */
  signIn: SignInOptions;
  workspaces: Workspace[];
  workspace: Workspace | undefined;
  selectWorkspace(id: string): void;
  refreshWorkspaces(): Promise<Workspace[]>;
  signedIn(user: SessionUser, csrfToken?: string, twoFactorRequired?: boolean): void;
  signOut(): Promise<void>;
  /** Ends every session of the person, in every browser; resolves with how many ended. */
  signOutEverywhere(): Promise<number>;
  /** Keeps the person's app language (a BCP 47 tag; null for the browser's) with their account. */
  setLocale(locale: string | null): Promise<void>;
  retry(): void;
}

/** /app/api/session's `signIn` (the gateway's app-api/oidc.ts, signInOptions). */
export interface SignInOptions {
  oidc: { name: string } | null;
  passwordSignIn: boolean;
}

const SessionContext = createContext<SessionState | undefined>(undefined);

export function useSession(): SessionState {
  const value = useContext(SessionContext);
  if (!value) throw new Error("useSession outside SessionProvider");
  return value;
}

function storedWorkspace(): string | null {
  try {
    return window.localStorage.getItem(workspaceStorageKey);
  } catch {
    return null;
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<SessionUser | null>(null);
  const [twoFactorRequired, setTwoFactorRequired] = useState(false);
  const [checking, setChecking] = useState(true);
  const [error, setError] = useState<string | undefined>();
  const [signedOutReason, setSignedOutReason] = useState<string | undefined>();
  const [signUpPolicy, setSignUpPolicy] = useState<SignUpPolicy>({ mode: "open" });
  const [signIn, setSignIn] = useState<SignInOptions>({ oidc: null, passwordSignIn: true });
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  const [workspaceId, setWorkspaceId] = useState<string | null>(storedWorkspace);
  const [attempt, setAttempt] = useState(0);

  const refreshWorkspaces = useCallback(async () => {
    const { items } = await get<{ items: Workspace[] }>("/workspaces");
    setWorkspaces(items);
    return items;
  }, []);

  useEffect(() => {
    let live = true;
    setChecking(true);
    get<{ user: SessionUser | null; twoFactorRequired: boolean; csrfToken?: string; signUp: SignUpPolicy; signIn: SignInOptions }>("/session").then(
      async (res) => {
        rememberCsrfToken(res.csrfToken);
        if (!live) return;
        setUser(res.user);
        setTwoFactorRequired(res.twoFactorRequired);
        setSignUpPolicy(res.signUp);
        setSignIn(res.signIn);
        setError(undefined);
        if (res.user && !res.twoFactorRequired) await refreshWorkspaces().catch(() => undefined);
        if (live) setChecking(false);
      },
      (err: Error) => {
        if (!live) return;
        // A refused session (401: the server has cleared its cookies) is signed out, not a failure.
        if (err instanceof ApiError && err.status === 401) {
          setUser(null);
          setError(undefined);
          setSignedOutReason(err.message);
        } else setError(err.message);
        setChecking(false);
      },
    );
    return () => {
      live = false;
    };
  }, [attempt, refreshWorkspaces]);

  useEffect(() => {
    setSignedOutHandler(() => {
      setUser(null);
      setWorkspaces([]);
    });
    return () => setSignedOutHandler(undefined);
  }, []);

  const workspace = workspaces.find((w) => w.id === workspaceId) ?? workspaces.find((w) => w.personal) ?? workspaces[0];

  const value: SessionState = {
    user,
    twoFactorRequired,
    twoFactorChanged(enabled) {
      setUser((current) => current && { ...current, twoFactorEnabled: enabled });
      if (enabled) setTwoFactorRequired(false);
      void refreshWorkspaces().catch(() => undefined);
    },
    signUpPolicy,
    signIn,
    checking,
    error,
    signedOutReason,
    workspaces,
    workspace,
    selectWorkspace(id) {
      setWorkspaceId(id);
      try {
        window.localStorage.setItem(workspaceStorageKey, id);
      } catch {
        // Private mode: the choice lasts for this page only.
      }
    },
    refreshWorkspaces,
    signedIn(next, csrfToken, mustEnrol = false) {
      rememberCsrfToken(csrfToken);
      setSignedOutReason(undefined);
      setUser(next);
      setTwoFactorRequired(mustEnrol);
      if (!mustEnrol) void refreshWorkspaces().catch(() => undefined);
    },
    async signOut() {
      try {
        await post("/auth/signout");
      } finally {
        setUser(null);
        setWorkspaces([]);
      }
    },
    async signOutEverywhere() {
      // A failure leaves every session valid, this one too: the person stays signed in.
      const { signedOutSessions } = await post<{ signedOutSessions: number }>("/session/sign-out-all");
      setUser(null);
      setWorkspaces([]);
      return signedOutSessions;
    },
    async setLocale(locale) {
      const res = await put<{ user: SessionUser }>("/session/locale", { locale });
      setUser(res.user);
    },
    retry: () => setAttempt((a) => a + 1),
  };
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
