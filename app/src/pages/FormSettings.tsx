// A form's Settings tab: branding (under the API's rule: hiding it needs the plan's entitlement, and a
// refusal is explained), submit label, closed message, redirect, one question at a time, progress bar and saving progress, email
// notifications and receipts, how long responses are kept, the form's language and its translations'
// completeness, and the files its responses hold against its storage quota.
import { useId, useState, type FormEvent } from "react";
import { ApiError, get, patch } from "../api.ts";
import { InlineMessage, useLoad, useNotify } from "../components/ui.tsx";
import { useSession } from "../session.tsx";
import { formatBytes } from "../lib/format.ts";
import type { Form, FormStorage } from "../types.ts";
import { LanguagesCard } from "./LanguagesCard.tsx";

export function brandingRefusal(plan: string | undefined): string {
  return `Hiding the branding needs a plan with the branding entitlement. This workspace is on the ${plan === "pro" ? "Pro" : "Free"} plan, which does not include it, so the form keeps showing “Made with Formsvc”. Plans are changed by the operator of this installation (workspace:set-plan).`;
}

/** Bytes as people read them: "0 bytes", "512 bytes", "1.5 KB", "12.3 MB", "1 GB" (1024-based). */
/** A date-time as a datetime-local input shows it, in the browser's time zone ("" for none). */
export function localDateTimeInput(iso: string | null): string {
  if (!iso) return "";
  const at = new Date(iso);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** The most days `deleteResponsesAfterDays` takes (form-document's maxRetentionDays; its module brings zod, which the app leaves out). */
const maxRetentionDays = 3650;

/** A whole number typed in, or null when left empty. */
function countOrNull(text: string): number | null {
  return text.trim() === "" ? null : Number(text);
}

/** What the form's responses hold: files, their size, and the share of the form's storage quota. */
function StorageCard({ formId }: { formId: string }) {
  const storage = useLoad(() => get<FormStorage>(`/forms/${formId}/storage`), [formId]);
  const held = storage.data;
  return (
    <section className="card" aria-labelledby={`${formId}-storage`}>
      <h3 id={`${formId}-storage`}>Files</h3>
      {storage.error && <InlineMessage kind="error">{storage.error}</InlineMessage>}
      {!held && !storage.error && <p className="hint">Loading…</p>}
      {held && (
        <>
          <p>
            Responses hold <strong>{held.files === 1 ? "1 file" : `${held.files} files`}</strong>, <strong>{formatBytes(held.bytes)}</strong> of this form's{" "}
            {formatBytes(held.quotaBytes)} of storage.
          </p>
          <meter min={0} max={held.quotaBytes} value={held.bytes} aria-label="Storage used">
            {Math.round((held.bytes / held.quotaBytes) * 100)}%
          </meter>
          <p className="hint">Uploads not yet part of a response count towards the limit too; deleting a response deletes its files.</p>
        </>
      )}
    </section>
  );
}

export function SettingsTab({ form, onSaved }: { form: Form; onSaved(form: Form): void }) {
  const { workspaces } = useSession();
  const workspace = workspaces.find((w) => w.id === form.workspaceId);
  const entitled = workspace?.entitlements.removeBranding ?? false;
  const id = useId();
  const notify = useNotify();
  const [settings, setSettings] = useState(form.settings);
  // The members' addresses as typed: one a line (or separated by commas), read on saving.
  const [memberList, setMemberList] = useState(form.settings.notifications.members.join("\n"));
  const emailQuestions = form.document.blocks.filter((b) => b.type === "EMAIL" && b.id);
  const [refusal, setRefusal] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(undefined);
    setError(undefined);
    try {
      const members = memberList.split(/[\s,;]+/).filter(Boolean);
      const saved = await patch<Form>(`/forms/${form.id}`, {
        settings: {
          ...settings,
          redirectUrl: settings.redirectUrl?.trim() ? settings.redirectUrl.trim() : null,
          notifications: { ...settings.notifications, members },
        },
      });
      onSaved(saved);
      setSettings(saved.settings);
      setMemberList(saved.settings.notifications.members.join("\n"));
      notify("Settings saved.");
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) {
        setRefusal(brandingRefusal(workspace?.plan));
        setSettings((s) => ({ ...s, branding: true }));
      } else {
        setError((err as Error).message);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="stack">
      <form className="stack settings" onSubmit={submit}>
        <fieldset className="card">
          <legend>Branding</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={settings.branding}
              aria-describedby={`${id}-branding-hint`}
              onChange={(e) => setSettings({ ...settings, branding: e.target.checked })}
            />{" "}
            Show “Made with Formsvc” on the form
          </label>
          <p className="hint" id={`${id}-branding-hint`}>
            {entitled
              ? `This workspace's ${workspace?.plan === "pro" ? "Pro" : ""} plan lets you hide the branding.`
              : `Hiding the branding needs the Pro plan; ${workspace ? `“${workspace.name}” is on the ${workspace.plan === "pro" ? "Pro" : "Free"} plan` : "this workspace's plan does not include it"}.`}
          </p>
          {refusal && (
            <InlineMessage kind="error">
              <strong>Branding was not changed.</strong> {refusal}
            </InlineMessage>
          )}
        </fieldset>
        <fieldset className="card">
          <legend>After submitting</legend>
          <div className="field">
            <label htmlFor={`${id}-submit`}>Submit button label</label>
            <input id={`${id}-submit`} value={settings.submitLabel} maxLength={60} required onChange={(e) => setSettings({ ...settings, submitLabel: e.target.value })} />
          </div>
          <div className="field">
            <label htmlFor={`${id}-redirect`}>Redirect to URL</label>
            <input
              id={`${id}-redirect`}
              type="url"
              value={settings.redirectUrl ?? ""}
              placeholder="https://example.com/thanks"
              aria-describedby={`${id}-redirect-hint`}
              onChange={(e) => setSettings({ ...settings, redirectUrl: e.target.value })}
            />
            <p className="hint" id={`${id}-redirect-hint`}>
              Empty shows the thank-you screen.
            </p>
          </div>
        </fieldset>
        <fieldset className="card">
          <legend>While answering</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={settings.oneQuestionAtATime}
              onChange={(e) => setSettings({ ...settings, oneQuestionAtATime: e.target.checked })}
            />{" "}
            One question at a time: each question on a screen of its own, Enter to go on
          </label>
          <label className="check">
            <input type="checkbox" checked={settings.showProgressBar} onChange={(e) => setSettings({ ...settings, showProgressBar: e.target.checked })} /> Show a progress bar on
            forms with several pages
          </label>
          <label className="check">
            <input type="checkbox" checked={settings.saveProgress} onChange={(e) => setSettings({ ...settings, saveProgress: e.target.checked })} /> Save answers as a partial response
            between pages
          </label>
        </fieldset>
        <fieldset className="card">
          <legend>Email for each completed response</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={settings.notifications.owner}
              onChange={(e) => setSettings({ ...settings, notifications: { ...settings.notifications, owner: e.target.checked } })}
            />{" "}
            Email the workspace's owner
          </label>
          <div className="field">
            <label htmlFor={`${id}-members`}>Also email these members</label>
            <textarea
              id={`${id}-members`}
              rows={2}
              value={memberList}
              placeholder="teammate@example.com"
              aria-describedby={`${id}-members-hint`}
              onChange={(e) => setMemberList(e.target.value)}
            />
            <p className="hint" id={`${id}-members-hint`}>
              One address a line, each the account email of a member of this workspace (up to 20); other addresses get nothing.
            </p>
          </div>
          <div className="field">
            <label htmlFor={`${id}-receipt`}>Send respondents a copy of their answers</label>
            <select
              id={`${id}-receipt`}
              value={settings.notifications.receiptQuestionId ?? ""}
              aria-describedby={`${id}-receipt-hint`}
              onChange={(e) => setSettings({ ...settings, notifications: { ...settings.notifications, receiptQuestionId: e.target.value || null } })}
            >
              <option value="">No copy</option>
              {emailQuestions.map((b) => (
                <option key={b.id} value={b.id}>
                  To the answer of “{"question" in b ? b.question : b.id}”
                </option>
              ))}
            </select>
            <p className="hint" id={`${id}-receipt-hint`}>
              {emailQuestions.length === 0 ? "Add an Email question to the form to send respondents a copy." : "Sent to the address the respondent gives in that Email question."}
            </p>
          </div>
        </fieldset>
        <fieldset className="card">
          <legend>Closing and spam</legend>
          <div className="field">
            <label htmlFor={`${id}-closes`}>Close the form at</label>
            <input
              id={`${id}-closes`}
              type="datetime-local"
              value={localDateTimeInput(settings.closesAt)}
              onChange={(e) => setSettings({ ...settings, closesAt: e.target.value ? new Date(e.target.value).toISOString() : null })}
            />
            <p className="hint">In your time zone. Leave empty to keep the form open.</p>
          </div>
          <div className="field">
            <label htmlFor={`${id}-limit`}>Close after this many responses</label>
            <input
              id={`${id}-limit`}
              type="number"
              min={1}
              step={1}
              value={settings.responseLimit ?? ""}
              onChange={(e) => setSettings({ ...settings, responseLimit: countOrNull(e.target.value) })}
            />
            <p className="hint">Completed responses; deleting one makes room again. Leave empty for no limit.</p>
          </div>
          <label className="check">
            <input type="checkbox" checked={settings.honeypot} onChange={(e) => setSettings({ ...settings, honeypot: e.target.checked })} /> Catch bots with a
            hidden field (a submission that fills it is not stored)
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={settings.proofOfWork !== null}
              onChange={(e) => setSettings({ ...settings, proofOfWork: e.target.checked ? { workFactor: 5000 } : null })}
            />{" "}
            Ask respondents' browsers to solve a proof-of-work check before sending (no third party, nothing to click)
          </label>
          {settings.proofOfWork && (
            <div className="field">
              <label htmlFor={`${id}-work`}>Work factor</label>
              <input
                id={`${id}-work`}
                type="number"
                min={10}
                max={1000000}
                step={1}
                value={settings.proofOfWork.workFactor}
                onChange={(e) => setSettings({ ...settings, proofOfWork: { workFactor: Number(e.target.value) } })}
              />
              <p className="hint">About 5000 takes a phone a second; higher costs bots (and people) more.</p>
            </div>
          )}
          <div className="field">
            <label htmlFor={`${id}-rate`}>Responses a minute at most</label>
            <input
              id={`${id}-rate`}
              type="number"
              min={1}
              step={1}
              value={settings.submissionsPerMinute ?? ""}
              onChange={(e) => setSettings({ ...settings, submissionsPerMinute: countOrNull(e.target.value) })}
            />
            <p className="hint">From everyone together; more are asked to wait. Leave empty for no limit of the form's own.</p>
          </div>
        </fieldset>
        <fieldset className="card">
          <legend>Keeping responses</legend>
          <div className="field">
            <label htmlFor={`${id}-retention`}>Delete responses after this many days</label>
            <input
              id={`${id}-retention`}
              type="number"
              min={1}
              max={maxRetentionDays}
              step={1}
              value={settings.deleteResponsesAfterDays ?? ""}
              aria-describedby={`${id}-retention-hint`}
              onChange={(e) => setSettings({ ...settings, deleteResponsesAfterDays: countOrNull(e.target.value) })}
            />
            <p className="hint" id={`${id}-retention-hint`}>
              A completed response is deleted with its files this many days after it was submitted, a partial one this many days after its last save (checked every few
              minutes; up to {maxRetentionDays} days). Leave empty to keep responses until you delete them.
            </p>
          </div>
        </fieldset>
        <fieldset className="card">
          <legend>When closed</legend>
          <div className="field">
            <label htmlFor={`${id}-closed`}>Closed message</label>
            <textarea id={`${id}-closed`} rows={2} maxLength={1000} value={settings.closedMessage} onChange={(e) => setSettings({ ...settings, closedMessage: e.target.value })} />
          </div>
        </fieldset>
        <LanguagesCard id={id} document={form.document} settings={settings} onLanguage={(language) => setSettings({ ...settings, language })} />
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "Saving…" : "Save settings"}
          </button>
        </div>
      </form>
      <StorageCard formId={form.id} />
    </div>
  );
}
