// Integrations: the form's webhooks (add, edit url/secret/headers/events/enabled, delete, send a test event),
// their deliveries (status, attempts, last error), each attempt's details, and Resend.
import { Fragment, useEffect, useId, useRef, useState, type FormEvent } from "react";
import { del, get, patch, post } from "../api.ts";
import { EmptyState, ErrorState, InlineMessage, Loading, useConfirm, useLoad, useNotify } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import type { Attempt, Delivery, Form, Page, Webhook } from "../types.ts";

interface HeaderRow {
  name: string;
  value: string;
}

/** The events a webhook can receive, in the order the API lists them, with what each means. */
export const eventTypeChoices: { type: string; label: string }[] = [
  { type: "FORM_RESPONSE", label: "A response is completed" },
  { type: "FORM_RESPONSE_PARTIAL", label: "A respondent reaches another page (partial response)" },
  { type: "FORM_PUBLISHED", label: "The form is published" },
  { type: "FORM_CLOSED", label: "The form is closed" },
  { type: "FORM_DELETED", label: "The form is moved to the Trash" },
];

/** What a webhook can send: the JSON event, or a chat message for a Slack or Discord incoming-webhook URL. */
export const formatChoices: { format: Webhook["format"]; label: string }[] = [
  { format: "standard", label: "JSON event" },
  { format: "slack", label: "Slack message" },
  { format: "discord", label: "Discord message" },
];

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
        setError("Choose at least one event.");
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
        <label htmlFor={`${id}-url`}>Endpoint URL</label>
        <input id={`${id}-url`} type="url" required value={url} placeholder="https://example.com/hooks/forms" onChange={(e) => setUrl(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-format`}>Sends</label>
        <select id={`${id}-format`} value={format} aria-describedby={`${id}-format-hint`} onChange={(e) => setFormat(e.target.value as Webhook["format"])}>
          {formatChoices.map((choice) => (
            <option key={choice.format} value={choice.format}>
              {choice.label}
            </option>
          ))}
        </select>
        <p className="hint" id={`${id}-format-hint`}>
          For Slack or Discord, paste the channel's incoming-webhook URL: each event arrives as a message with the answers and a link to the response here.
        </p>
      </div>
      <div className="field">
        <label htmlFor={`${id}-secret`}>Signing secret</label>
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
            {showSecret ? "Hide" : "Show"}
          </button>
        </div>
        <p className="hint" id={`${id}-secret-hint`}>
          {initial
            ? `Now ${initial.secret || "none"}. Leave empty to keep it; type a new one to replace it.`
            : "Optional: one starting whsec_ is made when you leave it empty, and shown once."}{" "}
          Each request carries <code>X-Service-Signature</code> (base64 of HMAC-SHA256 of the raw body with this secret) and the Standard Webhooks{" "}
          <code>webhook-signature</code>.
        </p>
      </div>
      <fieldset className="headers">
        <legend>Headers</legend>
        {rows.length === 0 && <p className="muted">No extra headers.</p>}
        {rows.map((row, i) => (
          <div key={i} className="option-row">
            <label className="sr-only" htmlFor={`${id}-h${i}-name`}>
              Header {i + 1} name
            </label>
            <input id={`${id}-h${i}-name`} placeholder="Name" value={row.name} onChange={(e) => setRows(rows.map((r, j) => (j === i ? { ...r, name: e.target.value } : r)))} />
            <label className="sr-only" htmlFor={`${id}-h${i}-value`}>
              Header {i + 1} value
            </label>
            <input id={`${id}-h${i}-value`} placeholder="Value" value={row.value} onChange={(e) => setRows(rows.map((r, j) => (j === i ? { ...r, value: e.target.value } : r)))} />
            <button type="button" onClick={() => setRows(rows.filter((_, j) => j !== i))} aria-label={`Remove header ${i + 1}`}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setRows([...rows, { name: "", value: "" }])}>
          Add header
        </button>
      </fieldset>
      <fieldset className="event-types">
        <legend>Events</legend>
        {eventTypeChoices.map(({ type, label }) => (
          <label key={type} className="check">
            <input
              type="checkbox"
              checked={eventTypes.includes(type)}
              onChange={(e) => setEventTypes(e.target.checked ? eventTypeChoices.map((c) => c.type).filter((t) => t === type || eventTypes.includes(t)) : eventTypes.filter((t) => t !== type))}
            />{" "}
            {label} <code>{type}</code>
          </label>
        ))}
      </fieldset>
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
      </label>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      <div className="actions">
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Saving…" : submitLabel}
        </button>
      </div>
    </form>
  );
}

const statusText: Record<Delivery["status"], string> = { pending: "Pending", retrying: "Retrying", succeeded: "Succeeded", failed: "Failed" };

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
  if (attempts.loading && !attempts.data) return <Loading what="Loading attempts" />;
  if (attempts.error) return <ErrorState message={attempts.error} onRetry={attempts.reload} />;
  if (attempts.data!.items.length === 0) return <p className="muted">Not attempted yet.</p>;
  return (
    <ol className="attempts">
      {attempts.data!.items.map((a) => (
        <li key={a.id} className="attempt">
          <p>
            <strong>Attempt {a.number}</strong> · {formatDateTime(a.createdAt)} · {a.statusCode ? `HTTP ${a.statusCode}` : "no answer"} · {a.durationMs} ms
            {a.manual && " · sent by hand"}
          </p>
          {a.error && <p className="error-text">Error: {a.error}</p>}
          {a.responseBody && (
            <details>
              <summary>Receiver&rsquo;s answer</summary>
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
      notify(after.status === "succeeded" ? "Sent again: the receiver accepted it." : `Sent again: ${after.lastError ?? statusText[after.status]}.`, after.status === "succeeded" ? "success" : "error");
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
      notify(d.status === "succeeded" ? "Test event delivered." : `Test event failed: ${d.lastError ?? statusText[d.status]}.`, d.status === "succeeded" ? "success" : "error");
      deliveries.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <section className="deliveries" aria-label={`Deliveries to ${webhook.url}`}>
      <div className="toolbar">
        <h4>Deliveries</h4>
        <button type="button" onClick={() => deliveries.reload()}>
          Refresh deliveries
        </button>
        <button type="button" onClick={test} disabled={busy === "test" || !webhook.enabled} title={webhook.enabled ? undefined : "Enable the webhook first"}>
          {busy === "test" ? "Sending…" : "Send test event"}
        </button>
      </div>
      {deliveries.loading && !deliveries.data ? (
        <Loading what="Loading deliveries" />
      ) : deliveries.error ? (
        <ErrorState message={deliveries.error} onRetry={deliveries.reload} />
      ) : deliveries.data!.items.length === 0 ? (
        <p className="muted">No deliveries yet. Each completed response is sent here; try Send test event.</p>
      ) : (
        <div className="table-wrap">
          <table className="table deliveries-table">
            <caption className="sr-only">Deliveries to {webhook.url}</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Attempts
                </th>
                <th scope="col">Last error</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data!.items.map((d) => (
                <Fragment key={d.id}>
                  <tr data-delivery-id={d.id}>
                    <td>{formatDateTime(d.createdAt)}</td>
                    <td>{d.trigger === "test" ? `Test event (${d.eventType})` : d.eventType}</td>
                    <td>
                      <span className={`badge badge-delivery-${d.status}`}>{statusText[d.status]}</span>
                      {d.lastStatusCode ? <span className="muted"> HTTP {d.lastStatusCode}</span> : null}
                      {d.nextAttemptAt && <span className="muted"> · next try {formatDateTime(d.nextAttemptAt)}</span>}
                    </td>
                    <td className="num">{d.attempts}</td>
                    {/* A failed attempt's error is history once a later one succeeded: the attempts keep it. */}
                    <td className="error-cell">{d.status !== "succeeded" && d.lastError ? d.lastError : <span className="muted">—</span>}</td>
                    <td className="actions-cell">
                      <button type="button" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? undefined : d.id)}>
                        {open === d.id ? "Hide attempts" : "Attempts"}
                      </button>
                      <button type="button" onClick={() => resend(d)} disabled={busy === d.id || !webhook.enabled}>
                        {busy === d.id ? "Sending…" : "Resend"}
                      </button>
                    </td>
                  </tr>
                  {open === d.id && (
                    <tr className="attempts-row">
                      <td colSpan={6}>
                        <p className="muted">
                          Event id <code>{d.eventId}</code>
                          {d.submissionId && (
                            <>
                              {" "}
                              · response <code>{d.submissionId}</code>
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
      title: "Delete this webhook?",
      body: (
        <p>
          Responses stop being sent to <code>{hook.url}</code>, and its delivery log is no longer shown.
        </p>
      ),
      confirmLabel: "Delete webhook",
      danger: true,
    });
    if (!ok) return;
    try {
      await del(`/webhooks/${hook.id}`);
      notify("Webhook deleted.");
      hooks.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  return (
    <div className="integrations">
      <div className="page-head">
        <div>
          <h2>Webhooks</h2>
          <p className="muted">The events each enabled webhook chooses (by default every completed response) are POSTed to it as JSON, retried when the receiver fails.</p>
        </div>
        {!adding && (
          <button type="button" className="primary" onClick={() => setAdding(true)}>
            Add webhook
          </button>
        )}
      </div>
      {adding && (
        <WebhookForm
          submitLabel="Add webhook"
          onCancel={() => setAdding(false)}
          onSubmit={async (body) => {
            const created = await post<Webhook>(`/forms/${form.id}/webhooks`, body);
            setAdding(false);
            setNewSecret(created.secret ?? undefined);
            notify("Webhook added.");
            hooks.reload();
          }}
        />
      )}
      {newSecret && (
        <InlineMessage kind="info">
          <p>
            <strong>Signing secret, shown only this once:</strong> <code className="webhook-secret">{newSecret}</code>
          </p>
          <p>Keep it with your receiver to verify each request; from now on it shows masked.</p>
          <button type="button" onClick={() => setNewSecret(undefined)}>
            Done
          </button>
        </InlineMessage>
      )}
      {hooks.loading && !hooks.data ? (
        <Loading what="Loading webhooks" />
      ) : hooks.error ? (
        <ErrorState message={hooks.error} onRetry={hooks.reload} />
      ) : hooks.data!.items.length === 0 ? (
        !adding && (
          <EmptyState title="No webhooks yet">
            <p>Add a webhook to send each completed response to your own server, Zapier, Make or n8n.</p>
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
                    {hook.enabled ? <span className="badge badge-published">Enabled</span> : <span className="badge badge-closed">Disabled</span>} ·{" "}
                    {hook.secret ? "signed" : "not signed"} · {Object.keys(hook.headers).length} extra {Object.keys(hook.headers).length === 1 ? "header" : "headers"} ·{" "}
                    {(hook.eventTypes ?? []).join(", ")}
                    {hook.format !== "standard" && <> · {formatChoices.find((c) => c.format === hook.format)?.label}</>}
                    {hook.subscriber && <> · subscribed by {hook.subscriber}</>}
                  </p>
                  {!hook.enabled && hook.disabledReason && (
                    <p className="muted webhook-disabled-reason">
                      Disabled {hook.disabledAt ? formatDateTime(hook.disabledAt) : ""}: {hook.disabledReason}. Edit it and tick Enabled to send again.
                    </p>
                  )}
                </div>
                <div className="actions">
                  <button type="button" onClick={() => setEditing(editing === hook.id ? undefined : hook.id)} aria-expanded={editing === hook.id}>
                    Edit
                  </button>
                  <button type="button" className="danger-outline" onClick={() => remove(hook)}>
                    Delete
                  </button>
                </div>
              </div>
              {editing === hook.id && (
                <WebhookForm
                  initial={hook}
                  submitLabel="Save webhook"
                  onCancel={() => setEditing(undefined)}
                  onSubmit={async (body) => {
                    await patch(`/webhooks/${hook.id}`, body);
                    setEditing(undefined);
                    notify("Webhook saved.");
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
