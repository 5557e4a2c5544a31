// The forms of the current workspace (status, responses, last change), creating one (blank or from a
// template), duplicating one, and the Trash (restore, or delete for good after typing the form's name).
import { useState } from "react";
import { del, get, post } from "../api.ts";
import { Dialog } from "../components/dialog.tsx";
import { EmptyState, ErrorState, InlineMessage, Loading, StatusBadge, useLoad, useNotify } from "../components/ui.tsx";
import { formatBytes, formatDateTime, formatRelative } from "../lib/format.ts";
import { formTemplates, type FormTemplate } from "../lib/templates.ts";
import { Link, useRouter } from "../router.tsx";
import { useSession } from "../session.tsx";
import type { Form, FormHoldings, Items } from "../types.ts";

/**
 * Makes a draft copy of the form's saved version ("<name> (copy)") and says so, or says why not; answers
 * the copy, or undefined when it was refused.
 */
export async function duplicateForm(form: Form, notify: ReturnType<typeof useNotify>): Promise<Form | undefined> {
  try {
    const copy = await post<Form>(`/forms/${form.id}/duplicate`);
    notify(`“${copy.name}” is created as a draft.`);
    return copy;
  } catch (err) {
    notify((err as Error).message, "error");
    return undefined;
  }
}

export function FormsPage() {
  const { workspace } = useSession();
  const { navigate } = useRouter();
  const notify = useNotify();
  const [creating, setCreating] = useState(false);
  const [choosing, setChoosing] = useState(false);
  const forms = useLoad(
    () => (workspace ? get<Items<Form>>(`/forms?workspaceId=${encodeURIComponent(workspace.id)}`) : Promise.resolve({ items: [] })),
    [workspace?.id],
  );
  const create = async (template?: FormTemplate) => {
    if (!workspace) return;
    setCreating(true);
    try {
      const form = await post<Form>(
        "/forms",
        template ? { workspaceId: workspace.id, name: template.name, document: template.document } : { workspaceId: workspace.id, name: "Untitled form" },
      );
      setChoosing(false);
      notify(template ? `Form created from the ${template.name} template. Change what you like, then publish.` : "Form created. Add questions, then save.");
      navigate(`/forms/${form.id}/edit`);
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setCreating(false);
    }
  };
  const newButton = (
    <button type="button" className="primary" onClick={() => setChoosing(true)} disabled={creating || !workspace}>
      New form
    </button>
  );
  const duplicate = async (form: Form) => {
    if (await duplicateForm(form, notify)) forms.reload();
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Forms</h1>
          {workspace && <p className="muted">in {workspace.name}</p>}
        </div>
        {newButton}
      </div>
      {choosing && (
        <Dialog title="New form" onClose={() => setChoosing(false)} wide>
          <p className="muted">Start from a blank form or a template; you can change everything afterwards.</p>
          <ul className="template-list" aria-busy={creating}>
            <li>
              <button type="button" onClick={() => create()} disabled={creating}>
                Blank form<span>No questions yet.</span>
              </button>
            </li>
            {formTemplates.map((template) => (
              <li key={template.id}>
                <button type="button" onClick={() => create(template)} disabled={creating}>
                  {template.name}
                  <span>{template.summary}</span>
                </button>
              </li>
            ))}
          </ul>
          <div className="actions">
            <button type="button" onClick={() => setChoosing(false)}>
              Cancel
            </button>
          </div>
        </Dialog>
      )}
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
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
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
                  <td className="actions-cell">
                    <button type="button" onClick={() => duplicate(form)} aria-label={`Duplicate ${form.name}`}>
                      Duplicate
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

export function TrashPage() {
  const { workspace } = useSession();
  const notify = useNotify();
  const [purging, setPurging] = useState<Form>();
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
          {purging && (
            <PurgeDialog
              form={purging}
              onClose={() => setPurging(undefined)}
              onPurged={(deleted) => {
                setPurging(undefined);
                notify(`“${purging.name}” is deleted for good, with ${countsText(deleted)}.`);
                trash.reload();
              }}
            />
          )}
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
                    <button type="button" className="danger-outline" onClick={() => setPurging(form)} aria-label={`Delete ${form.name} forever`}>
                      Delete forever
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

const integer = new Intl.NumberFormat("en-US");
const counted = (n: number, one: string, many: string) => `${integer.format(n)} ${n === 1 ? one : many}`;

/** "1,204 responses, 3 partial responses and 37 files": what a purge deletes (partial ones only when there are some). */
function countsText(holdings: FormHoldings): string {
  const parts = [counted(holdings.responses, "response", "responses")];
  if (holdings.partials > 0) parts.push(counted(holdings.partials, "partial response", "partial responses"));
  parts.push(counted(holdings.files, "file", "files"));
  return `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

/** Delete forever: what goes (counted by the server), and the form's name typed to confirm. */
function PurgeDialog({ form, onClose, onPurged }: { form: Form; onClose(): void; onPurged(deleted: FormHoldings): void }) {
  const preview = useLoad(() => get<FormHoldings>(`/forms/${form.id}/purge-preview`), [form.id]);
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const purge = async () => {
    setBusy(true);
    setError(undefined);
    try {
      onPurged(await del<FormHoldings>(`/forms/${form.id}/purge`));
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  const matches = typed === form.name;
  return (
    <Dialog title={`Delete “${form.name}” forever?`} onClose={onClose}>
      {preview.error ? (
        <ErrorState message={preview.error} onRetry={preview.reload} />
      ) : !preview.data ? (
        <Loading what="Counting what goes with it" />
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (matches && !busy) void purge();
          }}
        >
          <p className="purge-counts">Delete forever: {countsText(preview.data)}.</p>
          <p>
            {preview.data.files > 0 ? `The files (${formatBytes(preview.data.bytes)}) are removed from storage. ` : ""}This cannot be undone: the
            form, its responses and its files cannot be restored.
          </p>
          <label htmlFor="purge-name">
            Type <strong>{form.name}</strong> to confirm
          </label>
          <input id="purge-name" autoComplete="off" spellCheck={false} value={typed} onChange={(e) => setTyped(e.target.value)} autoFocus />
          {error && <InlineMessage kind="error">{error}</InlineMessage>}
          <div className="actions">
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" className="danger" disabled={!matches || busy}>
              {busy ? "Deleting…" : "Delete forever"}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
