// One form: its header with the status and the status actions, and the tabs Build, Preview, Responses,
// Integrations and Settings. The editor's draft lives here, so switching tabs keeps unsaved changes.
import { useEffect, useState } from "react";
import { get, patch, post } from "../api.ts";
import { ErrorState, Loading, StatusBadge, useConfirm, useLoad, useNotify } from "../components/ui.tsx";
import { useUnsavedChangesGuard } from "../components/unsaved-changes.tsx";
import { documentProblems, draftOf, type Draft } from "../lib/document.ts";
import { documentToSave } from "../lib/keys.ts";
import { formatRelative } from "../lib/format.ts";
import { Link, useRouter } from "../router.tsx";
import type { Form } from "../types.ts";
import { DesignTab } from "./Design.tsx";
import { Editor } from "./Editor.tsx";
import { duplicateForm } from "./Forms.tsx";
import { IntegrationsTab } from "./Integrations.tsx";
import { ResponsesTab } from "./Responses.tsx";
import { SettingsTab } from "./FormSettings.tsx";
import { ShareTab, usePublicUrl } from "./Share.tsx";

const tabs = [
  { id: "edit", label: "Build" },
  { id: "preview", label: "Preview" },
  { id: "responses", label: "Responses" },
  { id: "integrations", label: "Integrations" },
  { id: "share", label: "Share" },
  { id: "design", label: "Design" },
  { id: "settings", label: "Settings" },
] as const;
export type TabId = (typeof tabs)[number]["id"];

export function FormPage({ formId, tab, sub }: { formId: string; tab: TabId; sub?: string }) {
  const loaded = useLoad(() => get<Form>(`/forms/${formId}`), [formId]);
  const [form, setForm] = useState<Form>();
  const [draft, setDraft] = useState<Draft>();
  const [dirty, setDirty] = useState(false);
  const [saving, setSaving] = useState(false);
  const [problems, setProblems] = useState<string[]>([]);
  const notify = useNotify();
  const confirm = useConfirm();
  const { navigate } = useRouter();
  const address = usePublicUrl();

  useEffect(() => {
    if (loaded.data) {
      setForm(loaded.data);
      setDraft(draftOf(loaded.data));
      setDirty(false);
    }
  }, [loaded.data]);

  // The header's status and counts are read again on each tab, keeping the editor's draft as it is.
  useEffect(() => {
    if (!form) return;
    let live = true;
    get<Form>(`/forms/${formId}`).then(
      (fresh) => live && setForm(fresh),
      () => undefined,
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tab, sub]);

  // The form's tabs keep the draft; anywhere else loses it.
  useUnsavedChangesGuard(dirty, (to) => to.startsWith(`/forms/${formId}/`));

  if (loaded.error) {
    return (
      <div className="page">
        <p>
          <Link to="/forms">← All forms</Link>
        </p>
        <ErrorState message={loaded.error} onRetry={loaded.reload} />
      </div>
    );
  }
  if (!form || !draft) return <Loading what="Loading the form" />;

  const changeDraft = (next: Draft) => {
    setDraft(next);
    setDirty(true);
    setProblems([]);
  };

  const save = async () => {
    const found = documentProblems(draft);
    if (!draft.name.trim()) found.unshift("The form needs a name.");
    setProblems(found);
    if (found.length > 0) {
      notify("The form has problems: see the list above the blocks.", "error");
      return;
    }
    setSaving(true);
    try {
      const saved = await patch<Form>(`/forms/${form.id}`, { name: draft.name.trim(), document: documentToSave(draft) });
      setForm(saved);
      setDraft(draftOf(saved));
      setDirty(false);
      notify(saved.status === "draft" ? "Saved." : `Saved. Respondents now see version ${saved.version}.`);
    } catch (err) {
      notify((err as Error).message, "error");
      setProblems([(err as Error).message]);
    } finally {
      setSaving(false);
    }
  };

  const act = async (action: "publish" | "close" | "reopen", done: string) => {
    if (dirty && !(await confirm({ title: "Unsaved changes", body: <p>Your changes are not saved yet. Continue without them?</p>, confirmLabel: "Continue" }))) return;
    try {
      const updated = await post<Form>(`/forms/${form.id}/${action}`);
      setForm(updated);
      notify(done);
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  const trash = async () => {
    const ok = await confirm({
      title: "Move to Trash?",
      body: (
        <p>
          “{form.name}” stops taking responses and disappears from the API. You can restore it from the Trash.
        </p>
      ),
      confirmLabel: "Move to Trash",
      danger: true,
    });
    if (!ok) return;
    try {
      await post(`/forms/${form.id}/trash`);
      setDirty(false);
      notify(`“${form.name}” is in the Trash.`);
      navigate("/forms", { force: true });
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  // The copy is of the saved form; leaving for it asks about unsaved edits as any way out does.
  const duplicate = async () => {
    const copy = await duplicateForm(form, notify);
    if (copy) navigate(`/forms/${copy.id}/edit`);
  };

  // At PUBLIC_URL, as the Share tab gives it; the app's own address until that is known.
  const publicUrl = `${address.data ?? window.location.origin}/f/${form.id}`;

  return (
    <div className="page form-page">
      <p className="crumbs">
        <Link to="/forms">← All forms</Link>
      </p>
      <div className="page-head">
        <div>
          <h1>{form.name}</h1>
          <p className="muted form-meta">
            <StatusBadge status={form.status} /> <span>version {form.version}</span> ·{" "}
            <span>
              {form.responseCount} {form.responseCount === 1 ? "response" : "responses"}
            </span>{" "}
            · <span>changed {formatRelative(form.updatedAt)}</span>
            {dirty && <span className="unsaved"> · unsaved changes</span>}
          </p>
        </div>
        <div className="actions">
          {form.status === "draft" && (
            <button type="button" className="primary" onClick={() => act("publish", "Published: the form takes responses at its public link.")}>
              Publish
            </button>
          )}
          {form.status === "published" && (
            <>
              <a className="button" href={publicUrl} target="_blank" rel="noreferrer">
                Open public page
              </a>
              <button type="button" onClick={() => act("close", "Closed: the form takes no more responses.")}>
                Close
              </button>
            </>
          )}
          {form.status === "closed" && (
            <button type="button" className="primary" onClick={() => act("reopen", "Reopened: the form takes responses again.")}>
              Reopen
            </button>
          )}
          <button type="button" onClick={duplicate}>
            Duplicate
          </button>
          <button type="button" className="danger-outline" onClick={trash}>
            Move to Trash
          </button>
        </div>
      </div>
      {form.status !== "draft" && (
        <p className="public-link">
          Public link:{" "}
          <a href={publicUrl} target="_blank" rel="noreferrer">
            <code>{publicUrl}</code>
          </a>
        </p>
      )}
      <nav className="tabs" aria-label="Form sections">
        <ul>
          {tabs.map((t) => (
            <li key={t.id}>
              <Link to={`/forms/${form.id}/${t.id}`} aria-current={t.id === tab ? "page" : undefined}>
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <section className="tab-panel" aria-label={tabs.find((t) => t.id === tab)?.label}>
        {tab === "edit" && <Editor form={form} draft={draft} onChange={changeDraft} onSave={save} saving={saving} dirty={dirty} problems={problems} />}
        {tab === "preview" && <PreviewTab form={form} dirty={dirty} />}
        {tab === "responses" && <ResponsesTab form={form} responseId={sub} />}
        {tab === "integrations" && <IntegrationsTab form={form} />}
        {tab === "share" && <ShareTab form={form} onSaved={setForm} />}
        {tab === "design" && <DesignTab form={form} onSaved={setForm} />}
        {tab === "settings" && <SettingsTab form={form} onSaved={setForm} />}
      </section>
    </div>
  );
}

function PreviewTab({ form, dirty }: { form: Form; dirty: boolean }) {
  const [nonce, setNonce] = useState(0);
  return (
    <div className="preview">
      <div className="preview-bar">
        <p className="muted">
          This is the form as respondents see it{form.status === "draft" ? " once published" : ""}. Answers given here are not saved.
          {dirty && <strong> Save to see your latest changes.</strong>}
        </p>
        <button type="button" onClick={() => setNonce((n) => n + 1)}>
          Reload preview
        </button>
      </div>
      <iframe key={nonce} className="preview-frame" title={`Preview of ${form.name}`} src={`/app/api/forms/${form.id}/preview?at=${encodeURIComponent(form.updatedAt)}&n=${nonce}`} />
    </div>
  );
}
