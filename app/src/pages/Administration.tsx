// The installation's administration, for its administrator (the first account made): every user and every
// workspace, and each workspace's plan (which decides its entitlements, such as removing the branding).
import { useState, type ReactNode } from "react";
import { get, put } from "../api.ts";
import { ErrorState, Loading, useLoad, useNotify } from "../components/ui.tsx";
import { formatDateTime, formatNumber } from "../lib/format.ts";
import { useSession } from "../session.tsx";
import type { SessionUser, Workspace } from "../types.ts";
import { t } from "../i18n/messages.ts";

interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
}
type UserRow = SessionUser & { workspaceCount: number };
type WorkspaceRow = Workspace & { ownerEmail: string; memberCount: number };

/** Every item of a paged list, a hundred at a time, with "Show more" for the rest. */
function usePaged<T>(path: string) {
  const first = useLoad(() => get<Page<T>>(`${path}?limit=100`), [path]);
  const [more, setMore] = useState<{ items: T[]; cursor: string | null }>();
  const items = [...(first.data?.items ?? []), ...(more?.items ?? [])];
  const cursor = more ? more.cursor : (first.data?.nextCursor ?? null);
  const showMore = async () => {
    const page = await get<Page<T>>(`${path}?limit=100&cursor=${encodeURIComponent(cursor!)}`);
    setMore({ items: [...(more?.items ?? []), ...page.items], cursor: page.nextCursor });
  };
  return { first, items, cursor, showMore, reload: () => (setMore(undefined), first.reload()) };
}

export function AdministrationPage() {
  const users = usePaged<UserRow>("/admin/users");
  const workspaces = usePaged<WorkspaceRow>("/admin/workspaces");
  const notify = useNotify();
  const { refreshWorkspaces } = useSession();
  const [busy, setBusy] = useState(false);
  const setPlan = async (w: WorkspaceRow, plan: "free" | "pro") => {
    setBusy(true);
    try {
      await put(`/admin/workspaces/${w.id}/plan`, { plan });
      notify(t("admin.planSet", { workspace: w.name, plan }));
      workspaces.reload();
      // The administrator's own workspaces show their plan elsewhere in the app.
      await refreshWorkspaces();
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{t("nav.administration")}</h1>
          <p className="muted">{t("admin.intro")}</p>
        </div>
      </div>
      <PagedTable
        kind="workspaces"
        paged={workspaces}
        columns={[t("layout.workspace"), t("admin.owner"), t("admin.members"), t("admin.created"), t("admin.plan")]}
        row={(w) => (
          <tr key={w.id}>
            <td>{w.name}</td>
            <td>{w.ownerEmail}</td>
            <td>{formatNumber(w.memberCount)}</td>
            <td>{formatDateTime(w.createdAt)}</td>
            <td>
              <select aria-label={t("admin.planOf", { workspace: w.name })} value={w.plan} disabled={busy} onChange={(e) => void setPlan(w, e.target.value as "free" | "pro")}>
                <option value="free">{t("admin.free")}</option>
                <option value="pro">{t("admin.pro")}</option>
              </select>
            </td>
          </tr>
        )}
      />
      <PagedTable
        kind="users"
        paged={users}
        columns={[t("account.name"), t("account.email"), t("nav.workspaces"), t("admin.joined")]}
        row={(u) => (
          <tr key={u.id}>
            <td>
              {u.name} {u.administrator && <span className="badge">{t("admin.administrator")}</span>}
            </td>
            <td>
              {u.email} {!u.emailVerified && <span className="muted">({t("admin.notVerified")})</span>}
            </td>
            <td>{formatNumber(u.workspaceCount)}</td>
            <td>{formatDateTime(u.createdAt)}</td>
          </tr>
        )}
      />
    </div>
  );
}

/** A card with a paged list as a table: loading, error with retry, the rows, and "Show more" while more remain. */
function PagedTable<T>({ kind, paged, columns, row }: { kind: "workspaces" | "users"; paged: ReturnType<typeof usePaged<T>>; columns: string[]; row: (item: T) => ReactNode }) {
  const { first } = paged;
  return (
    <section className="card stack">
      <h2>{t("admin.table", { kind })}</h2>
      {first.loading && !first.data ? (
        <Loading what={t("admin.loading", { kind })} />
      ) : first.error ? (
        <ErrorState message={first.error} onRetry={first.reload} />
      ) : (
        <table className="table">
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>{paged.items.map(row)}</tbody>
        </table>
      )}
      {paged.cursor && (
        <button type="button" onClick={() => void paged.showMore()}>
          {t("admin.showMore", { kind })}
        </button>
      )}
    </section>
  );
}
