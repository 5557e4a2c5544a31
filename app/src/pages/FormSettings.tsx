// A form's Settings tab: branding (under the API's rule: hiding it needs the plan's entitlement, and a
// refusal is explained), submit label, closed message, redirect, progress bar and saving progress.
import { useId, useState, type FormEvent } from "react";
import { ApiError, patch } from "../api.ts";
import { InlineMessage, useNotify } from "../components/ui.tsx";
import { useSession } from "../session.tsx";
import type { Form } from "../types.ts";

export function brandingRefusal(plan: string | undefined): string {
  return `Hiding the branding needs a plan with the branding entitlement. This workspace is on the ${plan === "pro" ? "Pro" : "Free"} plan, which does not include it, so the form keeps showing “Made with Formsvc”. Plans are changed by the operator of this installation (workspace:set-plan).`;
}

export function SettingsTab({ form, onSaved }: { form: Form; onSaved(form: Form): void }) {
  const { workspaces } = useSession();
  const workspace = workspaces.find((w) => w.id === form.workspaceId);
  const entitled = workspace?.entitlements.removeBranding ?? false;
  const id = useId();
  const notify = useNotify();
  const [settings, setSettings] = useState(form.settings);
  const [refusal, setRefusal] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(undefined);
    setError(undefined);
    try {
      const saved = await patch<Form>(`/forms/${form.id}`, {
        settings: { ...settings, redirectUrl: settings.redirectUrl?.trim() ? settings.redirectUrl.trim() : null },
      });
      onSaved(saved);
      setSettings(saved.settings);
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
          <input type="checkbox" checked={settings.showProgressBar} onChange={(e) => setSettings({ ...settings, showProgressBar: e.target.checked })} /> Show a progress bar on
          forms with several pages
        </label>
        <label className="check">
          <input type="checkbox" checked={settings.saveProgress} onChange={(e) => setSettings({ ...settings, saveProgress: e.target.checked })} /> Save answers as a partial response
          between pages
        </label>
      </fieldset>
      <fieldset className="card">
        <legend>When closed</legend>
        <div className="field">
          <label htmlFor={`${id}-closed`}>Closed message</label>
          <textarea id={`${id}-closed`} rows={2} maxLength={1000} value={settings.closedMessage} onChange={(e) => setSettings({ ...settings, closedMessage: e.target.value })} />
        </div>
      </fieldset>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Saving…" : "Save settings"}
        </button>
      </div>
    </form>
  );
}
