// Settings → API keys: list (name, prefix, created, last used); Create API key with a name, the key shown
// once with a copy button; Delete, which refuses the key at once.
import { useId, useRef, useState, type FormEvent } from "react";
import { del, get, post } from "../api.ts";
import { EmptyState, ErrorState, InlineMessage, Loading, useConfirm, useLoad, useNotify } from "../components/ui.tsx";
import { copyText } from "../lib/clipboard.ts";
import { formatDateTime, formatRelative } from "../lib/format.ts";
import type { ApiKey } from "../types.ts";

export function ApiKeysPage() {
  const keys = useLoad(() => get<{ items: ApiKey[] }>("/api-keys"), []);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<{ name: string; key: string }>();
  const [copied, setCopied] = useState<boolean>();
  const [error, setError] = useState<string>();
  const keyField = useRef<HTMLInputElement>(null);
  const notify = useNotify();
  const confirm = useConfirm();
  const id = useId();

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      const res = await post<ApiKey & { key: string }>("/api-keys", { name });
      setCreated({ name: res.name, key: res.key });
      setCopied(undefined);
      setName("");
      keys.reload();
      requestAnimationFrame(() => keyField.current?.select());
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const remove = async (key: ApiKey) => {
    const ok = await confirm({
      title: `Delete the key “${key.name}”?`,
      body: <p>Scripts using it are refused (401) from the next request on. This cannot be undone.</p>,
      confirmLabel: "Delete key",
      danger: true,
    });
    if (!ok) return;
    try {
      await del(`/api-keys/${key.id}`);
      notify(`Key “${key.name}” deleted; it no longer works.`);
      keys.reload();
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>API keys</h1>
          <p className="muted">
            A key acts as you on the REST API at <code>/api/v1</code> (see <a href="/developers">the reference</a>): send it as <code>Authorization: Bearer &lt;key&gt;</code>.
          </p>
        </div>
      </div>

      <form className="card row create-key" onSubmit={create}>
        <div className="field field-inline">
          <label htmlFor={`${id}-name`}>Key name</label>
          <input id={`${id}-name`} required maxLength={100} value={name} placeholder="e.g. Zapier" onChange={(e) => setName(e.target.value)} />
        </div>
        <button type="submit" className="primary">
          Create API key
        </button>
      </form>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}

      {created && (
        <div className="card new-key" role="region" aria-labelledby={`${id}-new`}>
          <h2 id={`${id}-new`}>Your new key “{created.name}”</h2>
          <p>
            <strong>Copy it now: it is shown only once.</strong> Only a hash is kept, so a lost key cannot be shown again; delete it and create another.
          </p>
          <div className="row">
            <label className="sr-only" htmlFor={`${id}-key`}>
              New API key
            </label>
            <input id={`${id}-key`} ref={keyField} className="mono key-value" readOnly value={created.key} onFocus={(e) => e.target.select()} />
            <button
              type="button"
              onClick={async () => {
                const ok = await copyText(created.key, keyField.current);
                setCopied(ok);
              }}
            >
              Copy
            </button>
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
          <p role="status" aria-live="polite" className="hint">
            {copied === true ? "Copied to the clipboard." : copied === false ? "Copying is blocked here: the key is selected, press Ctrl+C (⌘C)." : ""}
          </p>
        </div>
      )}

      {keys.loading && !keys.data ? (
        <Loading what="Loading keys" />
      ) : keys.error ? (
        <ErrorState message={keys.error} onRetry={keys.reload} />
      ) : keys.data!.items.length === 0 ? (
        <EmptyState title="No API keys">
          <p>Create a key to script your forms, responses and webhooks.</p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <caption className="sr-only">Your API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data!.items.map((key) => (
                <tr key={key.id}>
                  <th scope="row">{key.name}</th>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>{formatDateTime(key.createdAt)}</td>
                  <td>
                    {key.lastUsedAt ? (
                      <time dateTime={key.lastUsedAt} title={formatDateTime(key.lastUsedAt)}>
                        {formatRelative(key.lastUsedAt)}
                      </time>
                    ) : (
                      "never"
                    )}
                  </td>
                  <td className="actions-cell">
                    <button type="button" className="danger-outline" onClick={() => remove(key)} aria-label={`Delete key ${key.name}`}>
                      Delete
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
