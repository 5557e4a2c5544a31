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
import { t, type MessageKey } from "../i18n/messages.ts";

const tabs = [
  { id: "edit", labelKey: "formTabs.edit" },
  { id: "preview", labelKey: "formTabs.preview" },
  { id: "responses", labelKey: "formTabs.responses" },
  { id: "integrations", labelKey: "formTabs.integrations" },
  { id: "share", labelKey: "formTabs.share" },
  { id: "design", labelKey: "formTabs.design" },
  { id: "settings", labelKey: "formTabs.settings" },
] as const satisfies readonly { id: string; labelKey: MessageKey }[];
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
          <Link to="/forms">← {t("formPage.allForms")}</Link>
        </p>
        <ErrorState message={loaded.error} onRetry={loaded.reload} />
      </div>
    );
  }
  if (!form || !draft) return <Loading what={t("formPage.loading")} />;

  const changeDraft = (next: Draft) => {
    setDraft(next);
    setDirty(true);
    setProblems([]);
  };

  const save = async () => {
    const found = documentProblems(draft);
    if (!draft.name.trim()) found.unshift(t("formPage.needsName"));
    setProblems(found);
    if (found.length > 0) {
      notify(t("formPage.hasProblems"), "error");
      return;
    }
    setSaving(true);
    try {
      const saved = await patch<Form>(`/forms/${form.id}`, { name: draft.name.trim(), document: documentToSave(draft) });
      setForm(saved);
      setDraft(draftOf(saved));
      setDirty(false);
      notify(saved.status === "draft" ? t("formPage.saved") : t("formPage.savedVersion", { version: saved.version }));
    } catch (err) {
      notify((err as Error).message, "error");
      setProblems([(err as Error).message]);
    } finally {
      setSaving(false);
    }
  };

  const act = async (action: "publish" | "close" | "reopen", done: string) => {
    if (dirty && !(await confirm({ title: t("formPage.unsavedTitle"), body: <p>{t("formPage.unsavedBody")}</p>, confirmLabel: t("formPage.continue") }))) return;
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
      title: t("formPage.trashTitle"),
      body: <p>{t("formPage.trashBody", { name: form.name })}</p>,
      confirmLabel: t("formPage.trash"),
      danger: true,
    });
    if (!ok) return;
    try {
      await post(`/forms/${form.id}/trash`);
      setDirty(false);
      notify(t("formPage.trashed", { name: form.name }));
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
        <Link to="/forms">← {t("formPage.allForms")}</Link>
      </p>
      <div className="page-head">
        <div>
          <h1>{form.name}</h1>
          <p className="muted form-meta">
            <StatusBadge status={form.status} /> <span>{t("formPage.version", { version: form.version })}</span> ·{" "}
            <span>{t("trash.countResponses", { count: form.responseCount })}</span> · <span>{t("formPage.changed", { when: formatRelative(form.updatedAt) })}</span>
            {dirty && <span className="unsaved"> · {t("formPage.unsaved")}</span>}
          </p>
        </div>
        <div className="actions">
          {form.status === "draft" && (
            <button type="button" className="primary" onClick={() => act("publish", t("formPage.published"))}>
              {t("formPage.publish")}
            </button>
          )}
          {form.status === "published" && (
            <>
              <a className="button" href={publicUrl} target="_blank" rel="noreferrer">
                {t("formPage.openPublic")}
              </a>
              <button type="button" onClick={() => act("close", t("formPage.closed"))}>
                {t("formPage.close")}
              </button>
            </>
          )}
          {form.status === "closed" && (
            <button type="button" className="primary" onClick={() => act("reopen", t("formPage.reopened"))}>
              {t("formPage.reopen")}
            </button>
          )}
          <button type="button" onClick={duplicate}>
            {t("forms.duplicate")}
          </button>
          <button type="button" className="danger-outline" onClick={trash}>
            {t("formPage.trash")}
          </button>
        </div>
      </div>
      {form.status !== "draft" && (
        <p className="public-link">
          {t("formPage.publicLink")}{" "}
          <a href={publicUrl} target="_blank" rel="noreferrer">
            <code>{publicUrl}</code>
          </a>
        </p>
      )}
      <nav className="tabs" aria-label={t("formPage.sections")}>
        <ul>
          {tabs.map((item) => (
            <li key={item.id}>
              <Link to={`/forms/${form.id}/${item.id}`} aria-current={item.id === tab ? "page" : undefined}>
                {t(item.labelKey)}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <section className="tab-panel" aria-label={t(tabs.find((item) => item.id === tab)?.labelKey ?? "formTabs.edit")}>
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
          {form.status === "draft" ? t("preview.introDraft") : t("preview.intro")}
          {dirty && <strong> {t("preview.saveToSee")}</strong>}
        </p>
        <button type="button" onClick={() => setNonce((n) => n + 1)}>
          {t("preview.reload")}
        </button>
      </div>
      <iframe key={nonce} className="preview-frame" title={t("preview.frameTitle", { name: form.name })} src={`/app/api/forms/${form.id}/preview?at=${encodeURIComponent(form.updatedAt)}&n=${nonce}`} />
    </div>
  );
}
