// The forms of the current workspace (status, responses, last change), creating one (blank or from a
// template), duplicating one, and the Trash (restore, or delete for good after typing the form's name).
import { useState } from "react";
import { del, get, post } from "../api.ts";
import { Dialog } from "../components/dialog.tsx";
import { EmptyState, ErrorState, InlineMessage, Loading, StatusBadge, useLoad, useNotify } from "../components/ui.tsx";
import { formatBytes, formatDateTime, formatNumber, formatRelative } from "../lib/format.ts";
import { formTemplates, type FormTemplate } from "../lib/templates.ts";
import { Link, useRouter } from "../router.tsx";
import { useSession } from "../session.tsx";
import type { Form, FormHoldings, Items } from "../types.ts";
import { t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

/**
 * Makes a draft copy of the form's saved version ("<name> (copy)") and says so, or says why not; answers
 * the copy, or undefined when it was refused.
 */
export async function duplicateForm(form: Form, notify: ReturnType<typeof useNotify>): Promise<Form | undefined> {
  try {
    const copy = await post<Form>(`/forms/${form.id}/duplicate`);
    notify(t("forms.duplicated", { name: copy.name }));
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
        template ? { workspaceId: workspace.id, name: template.name, document: template.document } : { workspaceId: workspace.id, name: t("forms.untitled") },
      );
      setChoosing(false);
      notify(template ? t("forms.createdFromTemplate", { template: template.name }) : t("forms.created"));
      navigate(`/forms/${form.id}/edit`);
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setCreating(false);
    }
  };
  const newButton = (
    <button type="button" className="primary" onClick={() => setChoosing(true)} disabled={creating || !workspace}>
      {t("forms.new")}
    </button>
  );
  const duplicate = async (form: Form) => {
    if (await duplicateForm(form, notify)) forms.reload();
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{t("nav.forms")}</h1>
          {workspace && <p className="muted">{t("forms.inWorkspace", { workspace: workspace.name })}</p>}
        </div>
        {newButton}
      </div>
      {choosing && (
        <Dialog title={t("forms.new")} onClose={() => setChoosing(false)} wide>
          <p className="muted">{t("forms.newIntro")}</p>
          <ul className="template-list" aria-busy={creating}>
            <li>
              <button type="button" onClick={() => create()} disabled={creating}>
                {t("forms.blank")}
                <span>{t("forms.blankSummary")}</span>
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
              {t("ui.cancel")}
            </button>
          </div>
        </Dialog>
      )}
      {!workspace || (forms.loading && !forms.data) ? (
        <Loading what={t("forms.loading")} />
      ) : forms.error ? (
        <ErrorState message={forms.error} onRetry={forms.reload} />
      ) : forms.data!.items.length === 0 ? (
        <EmptyState title={t("forms.empty")}>
          <p>{t("forms.emptyText")}</p>
          {newButton}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <caption className="sr-only">{t("forms.caption", { workspace: workspace?.name ?? "" })}</caption>
            <thead>
              <tr>
                <th scope="col">{t("forms.colName")}</th>
                <th scope="col">{t("forms.colStatus")}</th>
                <th scope="col" className="num">
                  {t("forms.colResponses")}
                </th>
                <th scope="col">{t("forms.colChanged")}</th>
                <th scope="col">
                  <span className="sr-only">{t("forms.colActions")}</span>
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
                    <Link to={`/forms/${form.id}/responses`} aria-label={t("forms.responsesTo", { count: form.responseCount, name: form.name })}>
                      {formatNumber(form.responseCount)}
                    </Link>
                  </td>
                  <td>
                    <time dateTime={form.updatedAt} title={formatDateTime(form.updatedAt)}>
                      {formatRelative(form.updatedAt)}
                    </time>
                  </td>
                  <td className="actions-cell">
                    <button type="button" onClick={() => duplicate(form)} aria-label={t("forms.duplicateNamed", { name: form.name })}>
                      {t("forms.duplicate")}
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
      notify(t("trash.restored", { name: form.name }));
      trash.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{t("nav.trash")}</h1>
          <p className="muted">{t("trash.intro")}</p>
        </div>
      </div>
      {!workspace || (trash.loading && !trash.data) ? (
        <Loading what={t("trash.loading")} />
      ) : trash.error ? (
        <ErrorState message={trash.error} onRetry={trash.reload} />
      ) : trash.data!.items.length === 0 ? (
        <EmptyState title={t("trash.empty")}>
          <p>{t("trash.emptyText")}</p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          {purging && (
            <PurgeDialog
              form={purging}
              onClose={() => setPurging(undefined)}
              onPurged={(deleted) => {
                setPurging(undefined);
                notify(t("trash.purged", { name: purging.name, counts: countsText(deleted) }));
                trash.reload();
              }}
            />
          )}
          <table className="table">
            <caption className="sr-only">{t("trash.caption")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("forms.colName")}</th>
                <th scope="col">{t("trash.colStatusBefore")}</th>
                <th scope="col" className="num">
                  {t("forms.colResponses")}
                </th>
                <th scope="col">{t("trash.colMoved")}</th>
                <th scope="col">
                  <span className="sr-only">{t("forms.colActions")}</span>
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
                  <td className="num">{formatNumber(form.responseCount)}</td>
                  <td>{formatDateTime(form.trashedAt)}</td>
                  <td className="actions-cell">
                    <button type="button" onClick={() => restore(form)} aria-label={t("trash.restoreNamed", { name: form.name })}>
                      {t("trash.restore")}
                    </button>
                    <button type="button" className="danger-outline" onClick={() => setPurging(form)} aria-label={t("trash.purgeNamed", { name: form.name })}>
                      {t("trash.purge")}
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

/** "1,204 responses, 3 partial responses and 37 files": what a purge deletes (partial ones only when there are some). */
function countsText(holdings: FormHoldings): string {
  const parts = [t("trash.countResponses", { count: holdings.responses })];
  if (holdings.partials > 0) parts.push(t("trash.countPartials", { count: holdings.partials }));
  parts.push(t("trash.countFiles", { count: holdings.files }));
  return t("list.and", { items: parts.slice(0, -1).join(", "), last: parts.at(-1)! });
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
    <Dialog title={t("trash.purgeTitle", { name: form.name })} onClose={onClose}>
      {preview.error ? (
        <ErrorState message={preview.error} onRetry={preview.reload} />
      ) : !preview.data ? (
        <Loading what={t("trash.counting")} />
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (matches && !busy) void purge();
          }}
        >
          <p className="purge-counts">{t("trash.purgeCounts", { counts: countsText(preview.data) })}</p>
          <p>
            {preview.data.files > 0 ? `${t("trash.filesRemoved", { size: formatBytes(preview.data.bytes) })} ` : ""}
            {t("trash.cannotUndo")}
          </p>
          <label htmlFor="purge-name">{tRich("trash.typeToConfirm", { name: <strong>{form.name}</strong> })}</label>
          <input id="purge-name" autoComplete="off" spellCheck={false} value={typed} onChange={(e) => setTyped(e.target.value)} autoFocus />
          {error && <InlineMessage kind="error">{error}</InlineMessage>}
          <div className="actions">
            <button type="button" onClick={onClose}>
              {t("ui.cancel")}
            </button>
            <button type="submit" className="danger" disabled={!matches || busy}>
              {busy ? t("trash.deleting") : t("trash.purge")}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
