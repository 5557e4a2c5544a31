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
import { t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

/** Product names, the same in every language. */
const captchaProviderNames = { turnstile: "Cloudflare Turnstile", hcaptcha: "hCaptcha", recaptcha: "Google reCAPTCHA" };

/** Addresses to show the fields of them (the same in every language). */
const exampleRedirect = "https://example.com/thanks";
const exampleEmail = "teammate@example.com";

export function brandingRefusal(plan: string | undefined): string {
  return t("settings.brandingRefusal", { plan: plan === "pro" ? "pro" : "free" });
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
      <h3 id={`${formId}-storage`}>{t("settings.files")}</h3>
      {storage.error && <InlineMessage kind="error">{storage.error}</InlineMessage>}
      {!held && !storage.error && <p className="hint">{t("ui.loading")}…</p>}
      {held && (
        <>
          <p>
            {tRich("settings.storage", {
              files: <strong>{t("trash.countFiles", { count: held.files })}</strong>,
              size: <strong>{formatBytes(held.bytes)}</strong>,
              quota: formatBytes(held.quotaBytes),
            })}
          </p>
          <meter min={0} max={held.quotaBytes} value={held.bytes} aria-label={t("settings.storageUsed")}>
            {Math.round((held.bytes / held.quotaBytes) * 100)}%
          </meter>
          <p className="hint">{t("settings.storageHint")}</p>
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
  // What a read never answers, typed here only: a new password and a captcha's secret key (empty: keep the stored one).
  const [passwordOn, setPasswordOn] = useState(form.settings.password);
  const [newPassword, setNewPassword] = useState("");
  const [captchaSecret, setCaptchaSecret] = useState("");
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
          password: passwordOn ? newPassword || settings.password : null,
          captcha: settings.captcha && { ...settings.captcha, ...(captchaSecret ? { secret: captchaSecret } : {}) },
        },
      });
      onSaved(saved);
      setSettings(saved.settings);
      setPasswordOn(saved.settings.password);
      setNewPassword("");
      setCaptchaSecret("");
      setMemberList(saved.settings.notifications.members.join("\n"));
      notify(t("settings.saved"));
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
          <legend>{t("settings.branding")}</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={settings.branding}
              aria-describedby={`${id}-branding-hint`}
              onChange={(e) => setSettings({ ...settings, branding: e.target.checked })}
            />{" "}
            {t("settings.showBranding")}
          </label>
          <p className="hint" id={`${id}-branding-hint`}>
            {entitled
              ? t("settings.brandingEntitled", { plan: workspace?.plan === "pro" ? "pro" : "other" })
              : workspace
                ? t("settings.brandingNeedsProOf", { workspace: workspace.name, plan: workspace.plan === "pro" ? "pro" : "free" })
                : t("settings.brandingNeedsPro")}
          </p>
          {refusal && (
            <InlineMessage kind="error">
              <strong>{t("settings.brandingUnchanged")}</strong> {refusal}
            </InlineMessage>
          )}
        </fieldset>
        <fieldset className="card">
          <legend>{t("settings.after")}</legend>
          <div className="field">
            <label htmlFor={`${id}-submit`}>{t("settings.submitLabel")}</label>
            <input id={`${id}-submit`} value={settings.submitLabel} maxLength={60} required onChange={(e) => setSettings({ ...settings, submitLabel: e.target.value })} />
          </div>
          <div className="field">
            <label htmlFor={`${id}-redirect`}>{t("settings.redirect")}</label>
            <input
              id={`${id}-redirect`}
              type="url"
              value={settings.redirectUrl ?? ""}
              placeholder={exampleRedirect}
              aria-describedby={`${id}-redirect-hint`}
              onChange={(e) => setSettings({ ...settings, redirectUrl: e.target.value })}
            />
            <p className="hint" id={`${id}-redirect-hint`}>
              {t("settings.redirectHint")}
            </p>
          </div>
        </fieldset>
        <fieldset className="card">
          <legend>{t("settings.while")}</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={settings.oneQuestionAtATime}
              onChange={(e) => setSettings({ ...settings, oneQuestionAtATime: e.target.checked })}
            />{" "}
            {t("settings.oneQuestionAtATime")}
          </label>
          <label className="check">
            <input type="checkbox" checked={settings.showProgressBar} onChange={(e) => setSettings({ ...settings, showProgressBar: e.target.checked })} />{" "}
            {t("settings.progressBar")}
          </label>
          <label className="check">
            <input type="checkbox" checked={settings.saveProgress} onChange={(e) => setSettings({ ...settings, saveProgress: e.target.checked })} />{" "}
            {t("settings.saveProgress")}
          </label>
        </fieldset>
        <fieldset className="card">
          <legend>{t("settings.email")}</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={settings.notifications.owner}
              onChange={(e) => setSettings({ ...settings, notifications: { ...settings.notifications, owner: e.target.checked } })}
            />{" "}
            {t("settings.emailOwner")}
          </label>
          <div className="field">
            <label htmlFor={`${id}-members`}>{t("settings.emailMembers")}</label>
            <textarea
              id={`${id}-members`}
              rows={2}
              value={memberList}
              placeholder={exampleEmail}
              aria-describedby={`${id}-members-hint`}
              onChange={(e) => setMemberList(e.target.value)}
            />
            <p className="hint" id={`${id}-members-hint`}>
              {t("settings.emailMembersHint")}
            </p>
          </div>
          <div className="field">
            <label htmlFor={`${id}-receipt`}>{t("settings.receipt")}</label>
            <select
              id={`${id}-receipt`}
              value={settings.notifications.receiptQuestionId ?? ""}
              aria-describedby={`${id}-receipt-hint`}
              onChange={(e) => setSettings({ ...settings, notifications: { ...settings.notifications, receiptQuestionId: e.target.value || null } })}
            >
              <option value="">{t("settings.noCopy")}</option>
              {emailQuestions.map((b) => (
                <option key={b.id} value={b.id}>
                  {t("settings.toAnswerOf", { question: ("question" in b ? b.question : undefined) ?? b.id ?? "" })}
                </option>
              ))}
            </select>
            <p className="hint" id={`${id}-receipt-hint`}>
              {emailQuestions.length === 0 ? t("settings.receiptNeedsEmail") : t("settings.receiptHint")}
            </p>
          </div>
        </fieldset>
        <fieldset className="card">
          <legend>{t("settings.closing")}</legend>
          <div className="field">
            <label htmlFor={`${id}-closes`}>{t("settings.closesAt")}</label>
            <input
              id={`${id}-closes`}
              type="datetime-local"
              value={localDateTimeInput(settings.closesAt)}
              onChange={(e) => setSettings({ ...settings, closesAt: e.target.value ? new Date(e.target.value).toISOString() : null })}
            />
            <p className="hint">{t("settings.closesAtHint")}</p>
          </div>
          <div className="field">
            <label htmlFor={`${id}-limit`}>{t("settings.limit")}</label>
            <input
              id={`${id}-limit`}
              type="number"
              min={1}
              step={1}
              value={settings.responseLimit ?? ""}
              onChange={(e) => setSettings({ ...settings, responseLimit: countOrNull(e.target.value) })}
            />
            <p className="hint">{t("settings.limitHint")}</p>
          </div>
          <label className="check">
            <input type="checkbox" checked={settings.honeypot} onChange={(e) => setSettings({ ...settings, honeypot: e.target.checked })} />{" "}
            {t("settings.honeypot")}
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={settings.proofOfWork !== null}
              onChange={(e) => setSettings({ ...settings, proofOfWork: e.target.checked ? { workFactor: 5000 } : null })}
            />{" "}
            {t("settings.proofOfWork")}
          </label>
          {settings.proofOfWork && (
            <div className="field">
              <label htmlFor={`${id}-work`}>{t("settings.workFactor")}</label>
              <input
                id={`${id}-work`}
                type="number"
                min={10}
                max={1000000}
                step={1}
                value={settings.proofOfWork.workFactor}
                onChange={(e) => setSettings({ ...settings, proofOfWork: { workFactor: Number(e.target.value) } })}
              />
              <p className="hint">{t("settings.workFactorHint")}</p>
            </div>
          )}
          <div className="field">
            <label htmlFor={`${id}-captcha`}>{t("settings.captchaProvider")}</label>
            <select
              id={`${id}-captcha`}
              value={settings.captcha?.provider ?? ""}
              onChange={(e) => {
                const provider = e.target.value as NonNullable<Form["settings"]["captcha"]>["provider"] | "";
                setSettings({ ...settings, captcha: provider ? { provider, siteKey: settings.captcha?.siteKey ?? "" } : null });
              }}
            >
              <option value="">{t("settings.captchaNone")}</option>
              {Object.entries(captchaProviderNames).map(([provider, name]) => (
                <option key={provider} value={provider}>
                  {name}
                </option>
              ))}
            </select>
          </div>
          {settings.captcha && (
            <>
              <div className="field">
                <label htmlFor={`${id}-site-key`}>{t("settings.siteKey")}</label>
                <input id={`${id}-site-key`} value={settings.captcha.siteKey} required onChange={(e) => setSettings({ ...settings, captcha: { ...settings.captcha!, siteKey: e.target.value.trim() } })} />
              </div>
              <div className="field">
                <label htmlFor={`${id}-secret-key`}>{t("settings.secretKey")}</label>
                <input
                  id={`${id}-secret-key`}
                  type="password"
                  autoComplete="off"
                  value={captchaSecret}
                  placeholder={settings.captcha.secretHint ? t("settings.secretStored", { hint: settings.captcha.secretHint }) : ""}
                  onChange={(e) => setCaptchaSecret(e.target.value.trim())}
                />
                <p className="hint">{t("settings.secretHint")}</p>
              </div>
            </>
          )}
          <label className="check">
            <input type="checkbox" checked={passwordOn} onChange={(e) => setPasswordOn(e.target.checked)} /> {t("settings.askPassword")}
          </label>
          {passwordOn && (
            <div className="field">
              <label htmlFor={`${id}-password`}>{t("settings.formPassword")}</label>
              <input
                id={`${id}-password`}
                type="password"
                autoComplete="new-password"
                minLength={4}
                maxLength={200}
                required={!settings.password}
                value={newPassword}
                placeholder={settings.password ? t("settings.passwordSet") : ""}
                onChange={(e) => setNewPassword(e.target.value)}
              />
              <p className="hint">{t("settings.passwordHint")}</p>
            </div>
          )}
          <label className="check">
            <input type="checkbox" checked={settings.requireEmailVerification} onChange={(e) => setSettings({ ...settings, requireEmailVerification: e.target.checked })} />{" "}
            {t("settings.emailVerification")}
          </label>
          <div className="field">
            <label htmlFor={`${id}-rate`}>{t("settings.rate")}</label>
            <input
              id={`${id}-rate`}
              type="number"
              min={1}
              step={1}
              value={settings.submissionsPerMinute ?? ""}
              onChange={(e) => setSettings({ ...settings, submissionsPerMinute: countOrNull(e.target.value) })}
            />
            <p className="hint">{t("settings.rateHint")}</p>
          </div>
        </fieldset>
        <fieldset className="card">
          <legend>{t("settings.keeping")}</legend>
          <div className="field">
            <label htmlFor={`${id}-retention`}>{t("settings.retention")}</label>
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
              {t("settings.retentionHint", { max: maxRetentionDays })}
            </p>
          </div>
        </fieldset>
        <fieldset className="card">
          <legend>{t("settings.whenClosed")}</legend>
          <div className="field">
            <label htmlFor={`${id}-closed`}>{t("settings.closedMessage")}</label>
            <textarea id={`${id}-closed`} rows={2} maxLength={1000} value={settings.closedMessage} onChange={(e) => setSettings({ ...settings, closedMessage: e.target.value })} />
          </div>
        </fieldset>
        <LanguagesCard id={id} document={form.document} settings={settings} onLanguage={(language) => setSettings({ ...settings, language })} />
        {error && <InlineMessage kind="error">{error}</InlineMessage>}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t("editor.saving") : t("settings.save")}
          </button>
        </div>
      </form>
      <StorageCard formId={form.id} />
    </div>
  );
}
