// The forms of the current workspace (status, responses, last change), creating one, and the Trash.
import { useState } from "react";
import { get, post } from "../api.ts";
import { EmptyState, ErrorState, Loading, StatusBadge, useLoad, useNotify } from "../components/ui.tsx";
import { formatDateTime, formatRelative } from "../lib/format.ts";
import { Link, useRouter } from "../router.tsx";
import { useSession } from "../session.tsx";
import type { Form, Items } from "../types.ts";

export function FormsPage() {
  const { workspace } = useSession();
  const { navigate } = useRouter();
  const notify = useNotify();
  const [creating, setCreating] = useState(false);
  const forms = useLoad(
    () => (workspace ? get<Items<Form>>(`/forms?workspaceId=${encodeURIComponent(workspace.id)}`) : Promise.resolve({ items: [] })),
    [workspace?.id],
  );
  const create = async () => {
    if (!workspace) return;
    setCreating(true);
    try {
      const form = await post<Form>("/forms", { workspaceId: workspace.id, name: "Untitled form" });
      notify("Form created. Add questions, then save.");
      navigate(`/forms/${form.id}/edit`);
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setCreating(false);
    }
  };
  const newButton = (
    <button type="button" className="primary" onClick={create} disabled={creating || !workspace}>
      {creating ? "Creating…" : "New form"}
    </button>
  );
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Forms</h1>
          {workspace && <p className="muted">in {workspace.name}</p>}
        </div>
        {newButton}
      </div>
      {!workspace || (forms.loading && !forms.data) ? (
        <Loading what="Loading forms" />
      ) : forms.error ? (
        <ErrorState message={forms.error} onRetry={forms.reload} />
      ) : forms.data!.items.length === 0 ? (
        <EmptyState title="No forms yet">
          <p>Create a form, add questions, and publish it to get a public link.</p>
          {newButton}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <caption className="sr-only">Forms of {workspace?.name}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Responses
                </th>
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {forms.data!.items.map((form) => (
                <tr key={form.id}>
                  <th scope="row">
                    <Link to={`/forms/${form.id}/edit`}>{form.name}</Link>
                  </th>
                  <td>
                    <StatusBadge status={form.status} />
                  </td>
                  <td className="num">
                    <Link to={`/forms/${form.id}/responses`} aria-label={`${form.responseCount} responses to ${form.name}`}>
                      {form.responseCount}
                    </Link>
                  </td>
                  <td>
                    <time dateTime={form.updatedAt} title={formatDateTime(form.updatedAt)}>
                      {formatRelative(form.updatedAt)}
                    </time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

export function TrashPage() {
  const { workspace } = useSession();
  const notify = useNotify();
  const trash = useLoad(
    () => (workspace ? get<Items<Form>>(`/forms?trashed=true&workspaceId=${encodeURIComponent(workspace.id)}`) : Promise.resolve({ items: [] })),
    [workspace?.id],
  );
  const restore = async (form: Form) => {
    try {
      await post(`/forms/${form.id}/restore`);
      notify(`“${form.name}” is restored.`);
      trash.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Trash</h1>
          <p className="muted">Forms in the Trash take no responses and are hidden from the API until restored.</p>
        </div>
      </div>
      {!workspace || (trash.loading && !trash.data) ? (
        <Loading what="Loading the Trash" />
      ) : trash.error ? (
        <ErrorState message={trash.error} onRetry={trash.reload} />
      ) : trash.data!.items.length === 0 ? (
        <EmptyState title="The Trash is empty">
          <p>Forms you move to the Trash show up here, and can be restored.</p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <caption className="sr-only">Forms in the Trash</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status before</th>
                <th scope="col" className="num">
                  Responses
                </th>
                <th scope="col">Moved to the Trash</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {trash.data!.items.map((form) => (
                <tr key={form.id}>
                  <th scope="row">{form.name}</th>
                  <td>
                    <StatusBadge status={form.status} />
                  </td>
                  <td className="num">{form.responseCount}</td>
                  <td>{formatDateTime(form.trashedAt)}</td>
                  <td className="actions-cell">
                    <button type="button" onClick={() => restore(form)} aria-label={`Restore ${form.name}`}>
                      Restore
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
