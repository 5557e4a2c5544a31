// One form: its header with the status and the status actions, and the tabs Build, Preview, Responses,
// Integrations and Settings. The editor's draft lives here, so switching tabs keeps unsaved changes.
import { useEffect, useMemo, useRef, useState } from "react";
import { get, patch, post } from "../api.ts";
import { ErrorState, Loading, StatusBadge, useConfirm, useLoad, useNotify } from "../components/ui.tsx";
import { useUnsavedChangesGuard } from "../components/unsaved-changes.tsx";
import { documentProblems, draftOf, type Draft } from "../lib/document.ts";
import { documentToSave } from "../lib/keys.ts";
import { formatRelative } from "../lib/format.ts";
import { mapHistory, record, redo, startHistory, undo, type History } from "../lib/history.ts";
import { Link, useRouter } from "../router.tsx";
import type { Form } from "../types.ts";
import { DesignTab } from "./Design.tsx";
import { Editor, type SaveState } from "./Editor.tsx";
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

/** How long (ms) the editor waits after the last change before it saves by itself. */
export const autosaveMs = 1000;

/** What a save sends, as text: equal texts are the same form, so a draft equal to the stored one is saved. */
function saveBody(draft: Draft) {
  return { name: draft.name.trim(), document: documentToSave(draft) };
}

/** `draft` with the keys the server gave its new questions (by block id); the same draft when none is new. */
function withStoredKeys(draft: Draft, keys: ReadonlyMap<string, string>): Draft {
  let changed = false;
  const blocks = draft.blocks.map((b) => {
    const key = b.id && !b.key ? keys.get(b.id) : undefined;
    if (!key) return b;
    changed = true;
    return { ...b, key };
  });
  return changed ? { ...draft, blocks } : draft;
}

/** The focused text field, which names the history step a change belongs to (typing on in it is one step). */
function typingIn(): Element | undefined {
  const el = typeof document === "undefined" ? null : document.activeElement;
  if (el instanceof HTMLTextAreaElement) return el;
  if (el instanceof HTMLInputElement && ["text", "search", "url", "email", "tel", "number", ""].includes(el.type)) return el;
  return undefined;
}

export function FormPage({ formId, tab, sub }: { formId: string; tab: TabId; sub?: string }) {
  const loaded = useLoad(() => get<Form>(`/forms/${formId}`), [formId]);
  const [form, setForm] = useState<Form>();
  const [history, setHistory] = useState<History<Draft>>();
  /** The stored form as this page last loaded or saved it: a save checks nobody else saved since. */
  const base = useRef<Form>(undefined);
  /** What was last stored, as saveBody's text. */
  const [stored, setStored] = useState<string>();
  const [saving, setSaving] = useState(false);
  const [saveState, setSaveState] = useState<SaveState>({ kind: "saved" });
  const [problems, setProblems] = useState<string[]>([]);
  const notify = useNotify();
  const confirm = useConfirm();
  const { navigate } = useRouter();
  const address = usePublicUrl();
  const draft = history?.present;
  const draftRef = useRef<Draft>(undefined);
  draftRef.current = draft;
  const savingRef = useRef(false);
  const body = useMemo(() => (draft ? JSON.stringify(saveBody(draft)) : undefined), [draft]);
  const dirty = body !== stored;

  /** The stored form changed by this page (a save, publishing, another tab's settings): the base of the next save. */
  const adopt = (next: Form) => {
    base.current = next;
    setForm(next);
  };

  const startFrom = (next: Form) => {
    adopt(next);
    const fresh = draftOf(next);
    setHistory(startHistory(fresh));
    setStored(JSON.stringify(saveBody(fresh)));
    setProblems([]);
    setSaveState({ kind: "saved" });
  };

  useEffect(() => {
    if (loaded.data) startFrom(loaded.data);
    // eslint-disable-next-line react-hooks/exhaustive-deps
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

  /**
   * Saves the draft as it is now. `manual`: the person asked (a notice says how it went); otherwise the
   * autosave or leaving the page. Refused without a request while the editor sees problems; refused too,
   * as a conflict, when the stored form changed since this page loaded or saved it (someone else saved).
   * Resolves whether the draft is stored.
   */
  const save = async (how: "manual" | "auto" | "leave" = "manual", overwrite = false): Promise<boolean> => {
    const sending = draftRef.current;
    if (!sending || !form || savingRef.current) return false;
    const found = documentProblems(sending);
    if (!sending.name.trim()) found.unshift(t("formPage.needsName"));
    setProblems(found);
    if (found.length > 0) {
      setSaveState({ kind: "problems" });
      if (how === "manual") notify(t("formPage.hasProblems"), "error");
      return false;
    }
    const payload = saveBody(sending);
    savingRef.current = true;
    setSaving(true);
    setSaveState({ kind: "saving" });
    try {
      // The version check: the form as stored now against the one this draft started from.
      const current = await get<Form>(`/forms/${form.id}`);
      if (!overwrite && base.current && current.updatedAt !== base.current.updatedAt) {
        setForm(current);
        setSaveState({ kind: "conflict", theirs: current });
        if (how === "manual") notify(t("formPage.conflict"), "error");
        return false;
      }
      const saved = await patch<Form>(`/forms/${form.id}`, payload);
      adopt(saved);
      setStored(JSON.stringify(payload));
      // New questions keep the keys they were stored under, in every step of the history too.
      const keys = new Map((saved.document.blocks ?? []).flatMap((b) => (b.id && "key" in b && b.key ? [[b.id, b.key] as const] : [])));
      setHistory((h) => h && mapHistory(h, (d) => withStoredKeys(d, keys)));
      setSaveState({ kind: "saved" });
      if (how === "manual") notify(saved.status === "draft" ? t("formPage.saved") : t("formPage.savedVersion", { version: saved.version }));
      return true;
    } catch (err) {
      setSaveState({ kind: "failed", message: (err as Error).message });
      setProblems([(err as Error).message]);
      if (how === "manual") notify((err as Error).message, "error");
      return false;
    } finally {
      savingRef.current = false;
      setSaving(false);
    }
  };

  // The autosave: a second after the last change, unless a save runs (it comes again after), the editor
  // sees problems (shown; saved once fixed) or a conflict waits for the person's choice.
  const blocked = saveState.kind === "conflict" || saveState.kind === "problems" || saveState.kind === "failed";
  useEffect(() => {
    if (!dirty || saving || saveState.kind === "conflict") return;
    const timer = setTimeout(() => void save("auto"), autosaveMs);
    return () => clearTimeout(timer);
    // save reads the latest draft from draftRef.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [body, dirty, saving, saveState.kind]);

  // A hidden page (another tab, the window closed) saves what waits at once.
  useEffect(() => {
    if (!dirty || saveState.kind === "conflict") return;
    const now = () => document.visibilityState === "hidden" && void save("leave");
    document.addEventListener("visibilitychange", now);
    return () => document.removeEventListener("visibilitychange", now);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [body, dirty, saveState.kind]);

  // The form's tabs keep the draft; leaving saves it first, and asks only when it cannot be saved.
  useUnsavedChangesGuard(dirty, (to) => to.startsWith(`/forms/${formId}/`), saveState.kind === "conflict" ? undefined : () => save("leave"));

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
  if (!form || !draft || !history) return <Loading what={t("formPage.loading")} />;

  const changeDraft = (next: Draft) => {
    setHistory((h) => h && record(h, next, typingIn(), Date.now()));
    if (saveState.kind !== "conflict" && saveState.kind !== "saving") setSaveState({ kind: "unsaved" });
  };
  const step = (how: "undo" | "redo") => {
    setHistory((h) => h && (how === "undo" ? undo(h) : redo(h)));
    if (saveState.kind !== "conflict" && saveState.kind !== "saving") setSaveState({ kind: "unsaved" });
  };
  const resolveConflict = (choice: "theirs" | "mine") => {
    if (saveState.kind !== "conflict") return;
    if (choice === "theirs") startFrom(saveState.theirs);
    else {
      base.current = saveState.theirs;
      setSaveState({ kind: "unsaved" });
      void save("manual", true);
    }
  };
  const shownState: SaveState = dirty && saveState.kind === "saved" ? { kind: "unsaved" } : !dirty && !blocked && saveState.kind !== "saving" ? { kind: "saved" } : saveState;

  const act = async (action: "publish" | "close" | "reopen", done: string) => {
    if (dirty && !(await save("leave")) && !(await confirm({ title: t("formPage.unsavedTitle"), body: <p>{t("formPage.unsavedBody")}</p>, confirmLabel: t("formPage.continue") }))) return;
    try {
      const updated = await post<Form>(`/forms/${form.id}/${action}`);
      adopt(updated);
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
      setStored(body);
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
        {tab === "edit" && (
          <Editor
            form={form}
            draft={draft}
            onChange={changeDraft}
            onSave={() => void save("manual")}
            saveState={shownState}
            problems={problems}
            canUndo={history.past.length > 0}
            canRedo={history.future.length > 0}
            onUndo={() => step("undo")}
            onRedo={() => step("redo")}
            onResolveConflict={resolveConflict}
          />
        )}
        {tab === "preview" && <PreviewTab form={form} dirty={dirty} />}
        {tab === "responses" && <ResponsesTab form={form} responseId={sub} />}
        {tab === "integrations" && <IntegrationsTab form={form} />}
        {tab === "share" && <ShareTab form={form} onSaved={adopt} />}
        {tab === "design" && <DesignTab form={form} onSaved={adopt} />}
        {tab === "settings" && <SettingsTab form={form} onSaved={adopt} />}
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
