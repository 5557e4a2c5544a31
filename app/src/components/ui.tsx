// Small building blocks: status badge, loading / empty / error states, notices, and a confirmation
// dialog on the native <dialog> (focus stays inside it, Escape cancels).
import { createContext, useCallback, useContext, useEffect, useRef, useState, type ReactNode } from "react";
import { Dialog } from "./dialog.tsx";
import { statusLabel } from "../lib/format.ts";
import type { FormStatus } from "../types.ts";
import { t } from "../i18n/messages.ts";

export function StatusBadge({ status }: { status: FormStatus }) {
  return <span className={`badge badge-${status}`}>{statusLabel(status)}</span>;
}

export function Loading({ what }: { what?: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      {what ?? t("ui.loading")}…
    </p>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function ErrorState({ message, onRetry }: { message: string; onRetry?: () => void }) {
  return (
    <div className="state state-error" role="alert">
      <p>
        <strong>{t("ui.couldNotLoad")}</strong> {message}
      </p>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          {t("ui.tryAgain")}
        </button>
      )}
    </div>
  );
}

/** An inline message tied to a form or a section; errors are announced at once. */
export function InlineMessage({ kind, children }: { kind: "error" | "info" | "success"; children: ReactNode }) {
  return (
    <div className={`inline inline-${kind}`} role={kind === "error" ? "alert" : "status"}>
      {children}
    </div>
  );
}

// --- notices (toasts) -------------------------------------------------------------------------------

interface Notice {
  id: number;
  kind: "success" | "error" | "info";
  text: string;
}

const NoticeContext = createContext<(text: string, kind?: Notice["kind"]) => void>(() => {});

export function useNotify() {
  return useContext(NoticeContext);
}

export function NoticeProvider({ children }: { children: ReactNode }) {
  const [notices, setNotices] = useState<Notice[]>([]);
  const next = useRef(1);
  const notify = useCallback((text: string, kind: Notice["kind"] = "success") => {
    const id = next.current++;
    setNotices((list) => [...list.slice(-2), { id, kind, text }]);
    window.setTimeout(() => setNotices((list) => list.filter((n) => n.id !== id)), kind === "error" ? 10_000 : 4_000);
  }, []);
  const dismiss = (id: number) => setNotices((list) => list.filter((n) => n.id !== id));
  return (
    <NoticeContext.Provider value={notify}>
      {children}
      {/* One stack in the bottom-left corner, away from the row buttons at the right of tables; only the
          notices themselves take clicks. Errors stay on top. */}
      <div className="notices">
        <div className="notices-list" role="alert" aria-live="assertive">
          {notices
            .filter((n) => n.kind === "error")
            .map((n) => (
              <NoticeItem key={n.id} notice={n} onDismiss={() => dismiss(n.id)} />
            ))}
        </div>
        <div className="notices-list" role="status" aria-live="polite">
          {notices
            .filter((n) => n.kind !== "error")
            .map((n) => (
              <NoticeItem key={n.id} notice={n} onDismiss={() => dismiss(n.id)} />
            ))}
        </div>
      </div>
    </NoticeContext.Provider>
  );
}

function NoticeItem({ notice, onDismiss }: { notice: Notice; onDismiss(): void }) {
  return (
    <div className={`notice notice-${notice.kind}`}>
      <span>{notice.text}</span>
      <button type="button" className="link" aria-label={t("ui.dismiss")} onClick={onDismiss}>
        ×
      </button>
    </div>
  );
}

// --- confirmation -----------------------------------------------------------------------------------

interface ConfirmRequest {
  title: string;
  body: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  resolve: (ok: boolean) => void;
}

const ConfirmContext = createContext<(request: Omit<ConfirmRequest, "resolve">) => Promise<boolean>>(async () => false);

/** Asks for confirmation in a modal dialog; resolves true when confirmed. */
export function useConfirm() {
  return useContext(ConfirmContext);
}

export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [request, setRequest] = useState<ConfirmRequest | undefined>();
  const ask = useCallback(
    (r: Omit<ConfirmRequest, "resolve">) => new Promise<boolean>((resolve) => setRequest({ ...r, resolve })),
    [],
  );
  const close = (ok: boolean) => {
    request?.resolve(ok);
    setRequest(undefined);
  };
  return (
    <ConfirmContext.Provider value={ask}>
      {children}
      {request && (
        <Dialog title={request.title} onClose={() => close(false)} describedBy="confirm-body">
          <form
            method="dialog"
            onSubmit={(e) => {
              e.preventDefault();
              close(true);
            }}
          >
            <div id="confirm-body">{request.body}</div>
            <div className="actions">
              <button type="button" onClick={() => close(false)} autoFocus>
                {t("ui.cancel")}
              </button>
              <button type="submit" className={request.danger ? "danger" : "primary"}>
                {request.confirmLabel}
              </button>
            </div>
          </form>
        </Dialog>
      )}
    </ConfirmContext.Provider>
  );
}

/** Loads data with state for loading, error and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const lastDeps = useRef<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    // Other inputs: what was shown belongs to them no more. A reload keeps it on screen meanwhile.
    const key = JSON.stringify(deps);
    const changed = lastDeps.current !== undefined && lastDeps.current !== key;
    lastDeps.current = key;
    setState((s) => (changed ? { loading: true } : { ...s, loading: true, error: undefined }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (err: Error) => live && setState({ error: err.message, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1), setData: (data: T) => setState({ data, loading: false }) };
}
