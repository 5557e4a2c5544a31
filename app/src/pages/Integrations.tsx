// Integrations: the form's webhooks (add, edit url/secret/headers/events/enabled, delete, send a test event),
// their deliveries (status, attempts, last error), each attempt's details, and Resend.
import { Fragment, useEffect, useId, useRef, useState, type FormEvent } from "react";
import { del, get, patch, post } from "../api.ts";
import { EmptyState, ErrorState, InlineMessage, Loading, useConfirm, useLoad, useNotify } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import type { Attempt, Delivery, Form, Page, Webhook } from "../types.ts";
import { t, type MessageKey } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

interface HeaderRow {
  name: string;
  value: string;
}

/** The events a webhook can receive, in the order the API lists them, with what each means. */
export const eventTypeChoices: { type: string; labelKey: MessageKey }[] = [
  { type: "FORM_RESPONSE", labelKey: "webhooks.event.response" },
  { type: "FORM_RESPONSE_PARTIAL", labelKey: "webhooks.event.partial" },
  { type: "FORM_PUBLISHED", labelKey: "webhooks.event.published" },
  { type: "FORM_CLOSED", labelKey: "webhooks.event.closed" },
  { type: "FORM_DELETED", labelKey: "webhooks.event.deleted" },
];

/** What a webhook can send: the JSON event, or a chat message for a Slack or Discord incoming-webhook URL. */
export const formatChoices: { format: Webhook["format"]; labelKey: MessageKey }[] = [
  { format: "standard", labelKey: "webhooks.format.standard" },
  { format: "slack", labelKey: "webhooks.format.slack" },
  { format: "discord", labelKey: "webhooks.format.discord" },
];

/** An address to show the field of one (the same in every language). */
const exampleEndpoint = "https://example.com/hooks/forms";

/** The headers object of the editor's rows; rows without a name are left out. */
export function headersOf(rows: HeaderRow[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const row of rows) if (row.name.trim()) headers[row.name.trim()] = row.value;
  return headers;
}

function WebhookForm({ initial, onSubmit, onCancel, submitLabel }: { initial?: Webhook; onSubmit(body: object): Promise<void>; onCancel?(): void; submitLabel: string }) {
  const id = useId();
  const [url, setUrl] = useState(initial?.url ?? "");
  // Reads show the secret masked: the field starts empty, and stays so to keep the current one.
  const [secret, setSecret] = useState("");
  const [showSecret, setShowSecret] = useState(false);
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const [eventTypes, setEventTypes] = useState<string[]>(initial?.eventTypes ?? ["FORM_RESPONSE"]);
  const [format, setFormat] = useState<Webhook["format"]>(initial?.format ?? "standard");
  const [rows, setRows] = useState<HeaderRow[]>(Object.entries(initial?.headers ?? {}).map(([name, value]) => ({ name, value })));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (eventTypes.length === 0) {
        setError(t("webhooks.chooseEvent"));
        return;
      }
      await onSubmit({ url: url.trim(), secret: secret || undefined, headers: headersOf(rows), eventTypes, format, enabled });
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card stack webhook-form" onSubmit={submit}>
      <div className="field">
        <label htmlFor={`${id}-url`}>{t("webhooks.url")}</label>
        <input id={`${id}-url`} type="url" required value={url} placeholder={exampleEndpoint} onChange={(e) => setUrl(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-format`}>{t("webhooks.sends")}</label>
        <select id={`${id}-format`} value={format} aria-describedby={`${id}-format-hint`} onChange={(e) => setFormat(e.target.value as Webhook["format"])}>
          {formatChoices.map((choice) => (
            <option key={choice.format} value={choice.format}>
              {t(choice.labelKey)}
            </option>
          ))}
        </select>
        <p className="hint" id={`${id}-format-hint`}>
          {t("webhooks.formatHint")}
        </p>
      </div>
      <div className="field">
        <label htmlFor={`${id}-secret`}>{t("webhooks.secret")}</label>
        <div className="row">
          <input
            id={`${id}-secret`}
            type={showSecret ? "text" : "password"}
            value={secret}
            autoComplete="off"
            aria-describedby={`${id}-secret-hint`}
            onChange={(e) => setSecret(e.target.value)}
          />
          <button type="button" onClick={() => setShowSecret((s) => !s)} aria-pressed={showSecret}>
            {showSecret ? t("webhooks.hide") : t("webhooks.show")}
          </button>
        </div>
        <p className="hint" id={`${id}-secret-hint`}>
          {initial ? t("webhooks.secretNow", { secret: initial.secret || t("webhooks.none") }) : t("webhooks.secretNew")}{" "}
          {tRich("webhooks.signatureHint", { header: <code>X-Service-Signature</code>, standard: <code>webhook-signature</code> })}
        </p>
      </div>
      <fieldset className="headers">
        <legend>{t("webhooks.headers")}</legend>
        {rows.length === 0 && <p className="muted">{t("webhooks.noHeaders")}</p>}
        {rows.map((row, i) => (
          <div key={i} className="option-row">
            <label className="sr-only" htmlFor={`${id}-h${i}-name`}>
              {t("webhooks.headerName", { number: i + 1 })}
            </label>
            <input id={`${id}-h${i}-name`} placeholder={t("forms.colName")} value={row.name} onChange={(e) => setRows(rows.map((r, j) => (j === i ? { ...r, name: e.target.value } : r)))} />
            <label className="sr-only" htmlFor={`${id}-h${i}-value`}>
              {t("webhooks.headerValue", { number: i + 1 })}
            </label>
            <input id={`${id}-h${i}-value`} placeholder={t("webhooks.value")} value={row.value} onChange={(e) => setRows(rows.map((r, j) => (j === i ? { ...r, value: e.target.value } : r)))} />
            <button type="button" onClick={() => setRows(rows.filter((_, j) => j !== i))} aria-label={t("webhooks.removeHeader", { number: i + 1 })}>
              {t("editor.remove")}
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setRows([...rows, { name: "", value: "" }])}>
          {t("webhooks.addHeader")}
        </button>
      </fieldset>
      <fieldset className="event-types">
        <legend>{t("webhooks.events")}</legend>
        {eventTypeChoices.map(({ type, labelKey }) => (
          <label key={type} className="check">
            <input
              type="checkbox"
              checked={eventTypes.includes(type)}
              onChange={(e) => setEventTypes(e.target.checked ? eventTypeChoices.map((c) => c.type).filter((other) => other === type || eventTypes.includes(other)) : eventTypes.filter((other) => other !== type))}
            />{" "}
            {t(labelKey)} <code>{type}</code>
          </label>
        ))}
      </fieldset>
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> {t("webhooks.enabled")}
      </label>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      <div className="actions">
        {onCancel && (
          <button type="button" onClick={onCancel}>
            {t("ui.cancel")}
          </button>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t("editor.saving") : submitLabel}
        </button>
      </div>
    </form>
  );
}

/** A delivery's status in the language spoken. */
const statusText = (status: Delivery["status"]) => t("webhooks.status", { status });

/** The delivery's attempts, read again whenever its count in the deliveries list moves (Resend, Refresh). */
function Attempts({ webhookId, deliveryId, count }: { webhookId: string; deliveryId: string; count: number }) {
  const attempts = useLoad(() => get<{ items: Attempt[] }>(`/webhooks/${webhookId}/deliveries/${deliveryId}/attempts`), [webhookId, deliveryId]);
  const shownCount = useRef(count);
  useEffect(() => {
    if (shownCount.current === count) return;
    shownCount.current = count;
    attempts.reload();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [count]);
  if (attempts.loading && !attempts.data) return <Loading what={t("webhooks.loadingAttempts")} />;
  if (attempts.error) return <ErrorState message={attempts.error} onRetry={attempts.reload} />;
  if (attempts.data!.items.length === 0) return <p className="muted">{t("webhooks.notAttempted")}</p>;
  return (
    <ol className="attempts">
      {attempts.data!.items.map((a) => (
        <li key={a.id} className="attempt">
          <p>
            <strong>{t("webhooks.attempt", { number: a.number })}</strong> · {formatDateTime(a.createdAt)} · {a.statusCode ? t("webhooks.http", { code: a.statusCode }) : t("webhooks.noAnswer")} ·{" "}
            {t("webhooks.duration", { ms: a.durationMs })}
            {a.manual && ` · ${t("webhooks.byHand")}`}
          </p>
          {a.error && <p className="error-text">{t("webhooks.error", { error: a.error })}</p>}
          {a.responseBody && (
            <details>
              <summary>{t("webhooks.receiverAnswer")}</summary>
              <pre>{a.responseBody}</pre>
            </details>
          )}
        </li>
      ))}
    </ol>
  );
}

function Deliveries({ webhook }: { webhook: Webhook }) {
  const deliveries = useLoad(() => get<Page<Delivery>>(`/webhooks/${webhook.id}/deliveries?limit=50`), [webhook.id]);
  const [open, setOpen] = useState<string>();
  const [busy, setBusy] = useState<string>();
  const notify = useNotify();
  const resend = async (d: Delivery) => {
    setBusy(d.id);
    try {
      const after = await post<Delivery>(`/webhooks/${webhook.id}/deliveries/${d.id}/retry`);
      notify(after.status === "succeeded" ? t("webhooks.resent") : t("webhooks.resentFailed", { reason: after.lastError ?? statusText(after.status) }), after.status === "succeeded" ? "success" : "error");
      deliveries.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setBusy(undefined);
    }
  };
  const test = async () => {
    setBusy("test");
    try {
      const d = await post<Delivery>(`/webhooks/${webhook.id}/test`);
      notify(d.status === "succeeded" ? t("webhooks.testDelivered") : t("webhooks.testFailed", { reason: d.lastError ?? statusText(d.status) }), d.status === "succeeded" ? "success" : "error");
      deliveries.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <section className="deliveries" aria-label={t("webhooks.deliveriesTo", { url: webhook.url })}>
      <div className="toolbar">
        <h4>{t("webhooks.deliveries")}</h4>
        <button type="button" onClick={() => deliveries.reload()}>
          {t("webhooks.refresh")}
        </button>
        <button type="button" onClick={test} disabled={busy === "test" || !webhook.enabled} title={webhook.enabled ? undefined : t("webhooks.enableFirst")}>
          {busy === "test" ? t("auth.sending") : t("webhooks.sendTest")}
        </button>
      </div>
      {deliveries.loading && !deliveries.data ? (
        <Loading what={t("webhooks.loadingDeliveries")} />
      ) : deliveries.error ? (
        <ErrorState message={deliveries.error} onRetry={deliveries.reload} />
      ) : deliveries.data!.items.length === 0 ? (
        <p className="muted">{t("webhooks.noDeliveries")}</p>
      ) : (
        <div className="table-wrap">
          <table className="table deliveries-table">
            <caption className="sr-only">{t("webhooks.deliveriesTo", { url: webhook.url })}</caption>
            <thead>
              <tr>
                <th scope="col">{t("admin.created")}</th>
                <th scope="col">{t("webhooks.event")}</th>
                <th scope="col">{t("forms.colStatus")}</th>
                <th scope="col" className="num">
                  {t("webhooks.attempts")}
                </th>
                <th scope="col">{t("webhooks.lastError")}</th>
                <th scope="col">
                  <span className="sr-only">{t("forms.colActions")}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data!.items.map((d) => (
                <Fragment key={d.id}>
                  <tr data-delivery-id={d.id}>
                    <td>{formatDateTime(d.createdAt)}</td>
                    <td>{d.trigger === "test" ? t("webhooks.testEvent", { type: d.eventType }) : d.eventType}</td>
                    <td>
                      <span className={`badge badge-delivery-${d.status}`}>{statusText(d.status)}</span>
                      {d.lastStatusCode ? <span className="muted"> {t("webhooks.http", { code: d.lastStatusCode })}</span> : null}
                      {d.nextAttemptAt && <span className="muted"> · {t("webhooks.nextTry", { when: formatDateTime(d.nextAttemptAt) })}</span>}
                    </td>
                    <td className="num">{d.attempts}</td>
                    {/* A failed attempt's error is history once a later one succeeded: the attempts keep it. */}
                    <td className="error-cell">{d.status !== "succeeded" && d.lastError ? d.lastError : <span className="muted">—</span>}</td>
                    <td className="actions-cell">
                      <button type="button" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? undefined : d.id)}>
                        {open === d.id ? t("webhooks.hideAttempts") : t("webhooks.attempts")}
                      </button>
                      <button type="button" onClick={() => resend(d)} disabled={busy === d.id || !webhook.enabled}>
                        {busy === d.id ? t("auth.sending") : t("webhooks.resend")}
                      </button>
                    </td>
                  </tr>
                  {open === d.id && (
                    <tr className="attempts-row">
                      <td colSpan={6}>
                        <p className="muted">
                          {t("webhooks.eventId")} <code>{d.eventId}</code>
                          {d.submissionId && (
                            <>
                              {" "}
                              · {t("webhooks.response")} <code>{d.submissionId}</code>
                            </>
                          )}
                        </p>
                        <Attempts webhookId={webhook.id} deliveryId={d.id} count={d.attempts} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function IntegrationsTab({ form }: { form: Form }) {
  const hooks = useLoad(() => get<{ items: Webhook[] }>(`/forms/${form.id}/webhooks`), [form.id]);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<string>();
  /** The secret of the webhook just added: its only whole showing. */
  const [newSecret, setNewSecret] = useState<string>();
  const notify = useNotify();
  const confirm = useConfirm();

  const remove = async (hook: Webhook) => {
    const ok = await confirm({
      title: t("webhooks.deleteTitle"),
      body: <p>{tRich("webhooks.deleteBody", { url: <code>{hook.url}</code> })}</p>,
      confirmLabel: t("webhooks.delete"),
      danger: true,
    });
    if (!ok) return;
    try {
      await del(`/webhooks/${hook.id}`);
      notify(t("webhooks.deleted"));
      hooks.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  return (
    <div className="integrations">
      <div className="page-head">
        <div>
          <h2>{t("webhooks.title")}</h2>
          <p className="muted">{t("webhooks.intro")}</p>
        </div>
        {!adding && (
          <button type="button" className="primary" onClick={() => setAdding(true)}>
            {t("webhooks.add")}
          </button>
        )}
      </div>
      {adding && (
        <WebhookForm
          submitLabel={t("webhooks.add")}
          onCancel={() => setAdding(false)}
          onSubmit={async (body) => {
            const created = await post<Webhook>(`/forms/${form.id}/webhooks`, body);
            setAdding(false);
            setNewSecret(created.secret ?? undefined);
            notify(t("webhooks.added"));
            hooks.reload();
          }}
        />
      )}
      {newSecret && (
        <InlineMessage kind="info">
          <p>
            <strong>{t("webhooks.secretOnce")}</strong> <code className="webhook-secret">{newSecret}</code>
          </p>
          <p>{t("webhooks.secretKeep")}</p>
          <button type="button" onClick={() => setNewSecret(undefined)}>
            {t("keys.done")}
          </button>
        </InlineMessage>
      )}
      {hooks.loading && !hooks.data ? (
        <Loading what={t("webhooks.loading")} />
      ) : hooks.error ? (
        <ErrorState message={hooks.error} onRetry={hooks.reload} />
      ) : hooks.data!.items.length === 0 ? (
        !adding && (
          <EmptyState title={t("webhooks.empty")}>
            <p>{t("webhooks.emptyText")}</p>
          </EmptyState>
        )
      ) : (
        <ul className="webhooks">
          {hooks.data!.items.map((hook) => (
            <li key={hook.id} className="card webhook" data-webhook-id={hook.id}>
              <div className="webhook-head">
                <div>
                  <h3 className="webhook-url">
                    <code>{hook.url}</code>
                  </h3>
                  <p className="muted">
                    {hook.enabled ? <span className="badge badge-published">{t("webhooks.enabled")}</span> : <span className="badge badge-closed">{t("webhooks.disabled")}</span>} ·{" "}
                    {hook.secret ? t("webhooks.signed") : t("webhooks.notSigned")} · {t("webhooks.extraHeaders", { count: Object.keys(hook.headers).length })} ·{" "}
                    {(hook.eventTypes ?? []).join(", ")}
                    {hook.format !== "standard" && <> · {t(formatChoices.find((c) => c.format === hook.format)?.labelKey ?? "webhooks.format.standard")}</>}
                    {hook.subscriber && <> · {t("webhooks.subscribedBy", { subscriber: hook.subscriber })}</>}
                  </p>
                  {!hook.enabled && hook.disabledReason && (
                    <p className="muted webhook-disabled-reason">
                      {t("webhooks.disabledBecause", { when: hook.disabledAt ? formatDateTime(hook.disabledAt) : "", reason: hook.disabledReason })}
                    </p>
                  )}
                </div>
                <div className="actions">
                  <button type="button" onClick={() => setEditing(editing === hook.id ? undefined : hook.id)} aria-expanded={editing === hook.id}>
                    {t("webhooks.edit")}
                  </button>
                  <button type="button" className="danger-outline" onClick={() => remove(hook)}>
                    {t("editor.delete")}
                  </button>
                </div>
              </div>
              {editing === hook.id && (
                <WebhookForm
                  initial={hook}
                  submitLabel={t("webhooks.save")}
                  onCancel={() => setEditing(undefined)}
                  onSubmit={async (body) => {
                    await patch(`/webhooks/${hook.id}`, body);
                    setEditing(undefined);
                    notify(t("webhooks.saved"));
                    hooks.reload();
                  }}
                />
              )}
              <Deliveries webhook={hook} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
